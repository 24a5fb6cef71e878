using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Small request/response rate (secnetperf's RPS shape: 512 B up, 4 KiB down) with 100 requests in flight.
/// QUIC: one connection, a new stream per request. Baseline: 100 SslStream/TCP connections reused.
/// One operation = one request; Op/s is requests per second.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class RequestResponseBenchmarks
{
    private const int InFlight = 100;
    private const int RequestBytes = 512;
    private const int ResponseBytes = 4096;

    private LoopbackPair _pair = null!;
    private readonly List<PerfClientConnection> _connections = new();
    private readonly List<Stream> _tcpStreams = new();
    private readonly byte[][] _scratch = CreateScratch();
    private WireStatsRecorder? _wire;

    [GlobalSetup(Target = nameof(TcpTls))]
    public void SetupTcpTls()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.TcpTls);
        for (int i = 0; i < InFlight; i++)
        {
            PerfClientConnection connection = _pair.Connect();
            _connections.Add(connection);
            _tcpStreams.Add(connection.OpenStreamAsync(default).AsTask().GetAwaiter().GetResult());
        }
    }

    [GlobalSetup(Target = nameof(Managed))]
    public void SetupManaged()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.Managed);
        _connections.Add(_pair.Connect());
        _wire = new WireStatsRecorder();
    }

    [GlobalSetup(Target = nameof(MsQuic))]
    public void SetupMsQuic()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.MsQuic);
        _connections.Add(_pair.Connect());
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _wire?.Save(nameof(RequestResponseBenchmarks), nameof(Managed), "");
        foreach (PerfClientConnection connection in _connections) connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _pair.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = InFlight, Description = "SslStream/TCP x100")]
    public Task TcpTls()
    {
        var tasks = new Task[InFlight];
        for (int i = 0; i < InFlight; i++)
        {
            tasks[i] = PerfClientOperations.RequestAsync(_tcpStreams[i], RequestBytes, ResponseBytes, last: false, _scratch[i]);
        }
        return Task.WhenAll(tasks);
    }

    [Benchmark(OperationsPerInvoke = InFlight, Description = "managed, stream/request")]
    public Task Managed()
    {
        _wire!.Count(InFlight);
        return QuicRequests();
    }

    [Benchmark(OperationsPerInvoke = InFlight, Description = "msquic, stream/request")]
    public Task MsQuic() => QuicRequests();

    private Task QuicRequests()
    {
        var tasks = new Task[InFlight];
        for (int i = 0; i < InFlight; i++) tasks[i] = OneRequestAsync(_connections[0], _scratch[i]);
        return Task.WhenAll(tasks);
    }

    private static async Task OneRequestAsync(PerfClientConnection connection, byte[] scratch)
    {
        await using Stream stream = await connection.OpenStreamAsync(default).ConfigureAwait(false);
        await PerfClientOperations.RequestAsync(stream, RequestBytes, ResponseBytes, last: true, scratch).ConfigureAwait(false);
    }

    private static byte[][] CreateScratch()
    {
        var scratch = new byte[InFlight][];
        for (int i = 0; i < InFlight; i++) scratch[i] = new byte[8 * 1024];
        return scratch;
    }
}
