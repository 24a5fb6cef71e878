using BenchmarkDotNet.Attributes;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Small request/response rate (secnetperf's RPS shape: 512 B up, 4 KiB down) with 100 requests in flight.
/// QUIC: one connection, a new stream per request. Baseline: 100 SslStream/TCP connections reused.
/// One operation = one request; Op/s is requests per second.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class RequestResponseBenchmarks : ConcurrentFlowsBenchmarkBase
{
    private const int InFlight = 100;
    private const int RequestBytes = 512;
    private const int ResponseBytes = 4096;

    private static readonly Func<Stream, byte[], Task> s_tcpRequest = (stream, scratch) => PerfClientOperations.RequestAsync(stream, RequestBytes, ResponseBytes, last: false, scratch);
    private static readonly Func<Stream, byte[], Task> s_quicRequest = (stream, scratch) => PerfClientOperations.RequestAsync(stream, RequestBytes, ResponseBytes, last: true, scratch);

    public RequestResponseBenchmarks()
        : base(InFlight)
    {
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = InFlight, Description = "SslStream/TCP x100")]
    public override Task TcpTls() => RunTcpFlows(s_tcpRequest);

    [Benchmark(OperationsPerInvoke = InFlight, Description = "managed, stream/request")]
    public override Task Managed()
    {
        Wire.Count(InFlight);
        return RunQuicFlows(s_quicRequest);
    }

    [Benchmark(OperationsPerInvoke = InFlight, Description = "msquic, stream/request")]
    public override Task MsQuic() => RunQuicFlows(s_quicRequest);
}
