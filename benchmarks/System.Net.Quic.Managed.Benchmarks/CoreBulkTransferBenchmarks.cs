using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using System.Security.Cryptography.X509Certificates;
using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// The sans-IO core's own cost per byte: one stream carries 16 MiB from the server to the client of an
/// <see cref="InMemoryCorePair"/> (real TLS, AES-128-GCM or the platform's first suite), both ends on this one thread, no
/// sockets, no thread hand-offs: framing, packet protection, acknowledgments, flow control and the copies in and out
/// of the stream buffers. Mean / 16 is the core's time per MiB for both ends together, free of the scheduling noise
/// of a loopback run.
/// </summary>
[Config(typeof(TransportBenchmarkConfig))]
public class CoreBulkTransferBenchmarks
{
    public const int TransferBytes = 16 << 20;
    private const int WriteSize = 64 * 1024;

    private readonly byte[] _write = new byte[WriteSize];
    private readonly byte[] _read = new byte[WriteSize];
    private X509Certificate2 _certificate = null!;
    private InMemoryCorePair _pair = null!;
    private long _clientStream;
    private long _serverStream = -1;

    [GlobalSetup]
    public void GlobalSetup()
    {
        _certificate = SelfSignedCertificate.Create();
        Random.Shared.NextBytes(_write);
        _pair = new InMemoryCorePair(_certificate, new StreamTableOptions
        {
            InitialMaxData = 16L << 20,
            MaxConnectionReceiveWindow = 24L << 20,
            InitialMaxStreamDataBidiLocal = 16L << 20,
            InitialMaxStreamDataBidiRemote = 16L << 20,
            InitialMaxStreamDataUni = 256 * 1024,
        });
        // The client opens the stream with one byte; the server answers on it in every iteration.
        if (!_pair.Client.TryOpenStream(unidirectional: false, out _clientStream)) throw new InvalidOperationException("no stream");
        _pair.Client.WriteStream(_clientStream, "x"u8, fin: false);
        Connection server = _pair.Server!;
        _pair.Run(() => _serverStream >= 0, pair =>
        {
            while (server.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind == ConnectionEventKind.StreamOpened) _serverStream = e.StreamId;
            }
        });
        server.ReadStream(_serverStream, _read, out _, out _, out _);
        Transfer(); // warm-up: slow start and the windows' growth happen here
    }

    [GlobalCleanup]
    public void GlobalCleanup()
    {
        _pair.Dispose();
        _certificate.Dispose();
    }

    [Benchmark(Description = "16 MiB over one stream, both ends of the core on one thread")]
    public long Transfer()
    {
        Connection client = _pair.Client;
        Connection server = _pair.Server!;
        long sent = 0, received = 0;
        _pair.Run(() => received == TransferBytes, pair =>
        {
            while (sent < TransferBytes)
            {
                int n = server.WriteStream(_serverStream, _write.AsSpan(0, (int)Math.Min(WriteSize, TransferBytes - sent)), fin: false);
                if (n == 0) break;
                sent += n;
            }
            while (server.TryDequeueEvent(out _)) { }
            while (client.TryDequeueEvent(out _)) { }
            int read;
            while ((read = client.ReadStream(_clientStream, _read, out _, out _, out _)) > 0) received += read;
        });
        return received;
    }
}
