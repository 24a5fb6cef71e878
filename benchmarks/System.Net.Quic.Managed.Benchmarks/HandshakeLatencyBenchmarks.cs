using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Handshake latency: connect, send a request on a new stream and read the first response byte, close.
/// The listener is set up in GlobalSetup; ECDSA P-256 certificate, no session resumption.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class HandshakeLatencyBenchmarks
{
    private LoopbackPair _pair = null!;
    private readonly byte[] _scratch = new byte[1024];
    private WireStatsRecorder? _wire;

    [GlobalSetup(Target = nameof(TcpTls))]
    public void SetupTcpTls() => _pair = LoopbackPair.Start(PerfTransportKind.TcpTls);

    [GlobalSetup(Target = nameof(Managed))]
    public void SetupManaged()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.Managed);
        _wire = new WireStatsRecorder();
    }

    [GlobalSetup(Target = nameof(MsQuic))]
    public void SetupMsQuic() => _pair = LoopbackPair.Start(PerfTransportKind.MsQuic);

    [GlobalCleanup]
    public void Cleanup()
    {
        _wire?.Save(nameof(HandshakeLatencyBenchmarks), nameof(Managed), "");
        _pair.Dispose();
    }

    [Benchmark(Baseline = true, Description = "SslStream/TCP connect+1st byte")]
    public Task TcpTls() => ConnectAndFirstByteAsync(_pair, _scratch);

    [Benchmark(Description = "managed connect+1st byte")]
    public Task Managed()
    {
        _wire!.Count();
        return ConnectAndFirstByteAsync(_pair, _scratch);
    }

    [Benchmark(Description = "msquic connect+1st byte")]
    public Task MsQuic() => ConnectAndFirstByteAsync(_pair, _scratch);

    internal static async Task ConnectAndFirstByteAsync(LoopbackPair pair, byte[] scratch)
    {
        PerfClientConnection connection = await pair.Transport.ConnectAsync(default).ConfigureAwait(false);
        try
        {
            Stream stream = await connection.OpenStreamAsync(default).ConfigureAwait(false);
            await PerfClientOperations.RequestAsync(stream, 1, 1, last: true, scratch).ConfigureAwait(false);
            if (connection is not TcpTlsClientConnection) await stream.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            await connection.DisposeAsync().ConfigureAwait(false);
        }
    }
}
