using BenchmarkDotNet.Attributes;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// 100 uploads of 1 MiB at once. QUIC: 100 new streams on one connection (each ends with FIN both ways).
/// Baseline: 100 SslStream/TCP connections set up in GlobalSetup (TCP cannot multiplex one connection).
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class ParallelTransferBenchmarks : ConcurrentFlowsBenchmarkBase
{
    private const int FlowCount = 100;
    private const int FlowBytes = 1024 * 1024;

    private static readonly Func<Stream, byte[], Task> s_tcpUpload = (stream, scratch) => PerfClientOperations.UploadAsync(stream, FlowBytes, last: false, scratch);
    private static readonly Func<Stream, byte[], Task> s_quicUpload = (stream, scratch) => PerfClientOperations.UploadAsync(stream, FlowBytes, last: true, scratch);

    public ParallelTransferBenchmarks()
        : base(FlowCount)
    {
    }

    [Benchmark(Baseline = true, Description = "100 x SslStream/TCP")]
    public override Task TcpTls() => RunTcpFlows(s_tcpUpload);

    [Benchmark(Description = "100 streams, managed")]
    public override Task Managed()
    {
        Wire.Count();
        return RunQuicFlows(s_quicUpload);
    }

    [Benchmark(Description = "100 streams, msquic")]
    public override Task MsQuic() => RunQuicFlows(s_quicUpload);
}
