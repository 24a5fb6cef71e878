using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using System.Security.Cryptography.X509Certificates;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// TARGETS.md's "100k concurrent streams on one connection": the client opens N bidirectional streams at once and
/// sends one byte and FIN on each; the server keeps every stream open until all N arrived, then answers one byte and
/// FIN on each; done when the client has read all N answers. Runs the sans-IO core in memory (see
/// <see cref="InMemoryCorePair"/>), so the figure is the transport's processing cost per stream, without sockets.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 1, iterationCount: 3)]
public class ConcurrentStreamsBenchmarks
{
    private static readonly byte[] s_one = "x"u8.ToArray();
    private X509Certificate2 _certificate = null!;
    private InMemoryCorePair _pair = null!;
    private readonly byte[] _read = new byte[16];
    private long[] _serverStreams = null!;

    [Params(10_000, 100_000)]
    public int Streams { get; set; }

    [GlobalSetup]
    public void GlobalSetup() => _certificate = SelfSignedCertificate.Create();

    [GlobalCleanup]
    public void GlobalCleanup() => _certificate.Dispose();

    [IterationSetup]
    public void IterationSetup()
    {
        _pair = new InMemoryCorePair(_certificate, new StreamTableOptions
        {
            MaxStreamsBidi = Streams,
            MaxStreamsUni = 10,
            InitialMaxData = 64L << 20,
            MaxConnectionReceiveWindow = 64L << 20,
            InitialMaxStreamDataBidiLocal = 1024,
            InitialMaxStreamDataBidiRemote = 1024,
            InitialMaxStreamDataUni = 1024,
        });
        _serverStreams = new long[Streams];
    }

    [IterationCleanup]
    public void IterationCleanup() => _pair.Dispose();

    [Benchmark(Description = "N concurrent streams, 1 byte each way")]
    public int OpenSendAnswerAll()
    {
        Connection client = _pair.Client;
        Connection server = _pair.Server!;
        for (int i = 0; i < Streams; i++)
        {
            if (!client.TryOpenStream(unidirectional: false, out long id)) throw new InvalidOperationException($"stream {i} refused: limit below {Streams}");
            client.WriteStream(id, s_one, fin: true);
        }

        int arrived = 0, answered = 0, answersRead = 0;
        _pair.Run(() => answersRead == Streams, pair =>
        {
            while (server.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind == ConnectionEventKind.StreamOpened) _serverStreams[arrived++] = e.StreamId;
            }
            if (arrived == Streams && answered == 0)
            {
                // Every stream is open on both ends now: answer them all.
                for (int i = 0; i < Streams; i++)
                {
                    server.ReadStream(_serverStreams[i], _read, out _, out _, out _);
                    server.WriteStream(_serverStreams[i], s_one, fin: true);
                }
                answered = Streams;
            }
            while (client.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind != ConnectionEventKind.StreamReadable) continue;
                client.ReadStream(e.StreamId, _read, out bool fin, out _, out _);
                if (fin) answersRead++;
            }
        });
        return answersRead;
    }
}
