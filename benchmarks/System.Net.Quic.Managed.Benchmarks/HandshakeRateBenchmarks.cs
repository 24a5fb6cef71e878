using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Handshakes per second: 16 clients connect at once (each: handshake, one request byte, one response byte, close).
/// One operation = one handshake, so Op/s is handshakes per second.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class HandshakeRateBenchmarks
{
    private const int Concurrent = 16;

    private LoopbackPair _pair = null!;
    private readonly byte[][] _scratch = CreateScratch();
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
        _wire?.Save(nameof(HandshakeRateBenchmarks), nameof(Managed), "");
        _pair.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Concurrent, Description = "SslStream/TCP x16")]
    public Task TcpTls() => Many();

    [Benchmark(OperationsPerInvoke = Concurrent, Description = "managed x16")]
    public Task Managed()
    {
        _wire!.Count(Concurrent);
        return Many();
    }

    [Benchmark(OperationsPerInvoke = Concurrent, Description = "msquic x16")]
    public Task MsQuic() => Many();

    private Task Many()
    {
        var tasks = new Task[Concurrent];
        for (int i = 0; i < Concurrent; i++) tasks[i] = HandshakeLatencyBenchmarks.ConnectAndFirstByteAsync(_pair, _scratch[i]);
        return Task.WhenAll(tasks);
    }

    private static byte[][] CreateScratch()
    {
        var scratch = new byte[Concurrent][];
        for (int i = 0; i < Concurrent; i++) scratch[i] = new byte[1024];
        return scratch;
    }
}
