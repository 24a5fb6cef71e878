using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// 100 uploads of 1 MiB at once. QUIC: 100 new streams on one connection (each ends with FIN both ways).
/// Baseline: 100 SslStream/TCP connections set up in GlobalSetup (TCP cannot multiplex one connection).
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class ParallelTransferBenchmarks
{
    private const int Flows = 100;
    private const int FlowBytes = 1024 * 1024;

    private LoopbackPair _pair = null!;
    private readonly List<PerfClientConnection> _connections = new();
    private readonly List<Stream> _tcpStreams = new();
    private readonly byte[][] _scratch = CreateScratch();
    private WireStatsRecorder? _wire;

    [GlobalSetup(Target = nameof(TcpTls))]
    public void SetupTcpTls()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.TcpTls);
        for (int i = 0; i < Flows; i++)
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
        _wire?.Save(nameof(ParallelTransferBenchmarks), nameof(Managed), "");
        foreach (PerfClientConnection connection in _connections) connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _pair.Dispose();
    }

    [Benchmark(Baseline = true, Description = "100 x SslStream/TCP")]
    public Task TcpTls()
    {
        var tasks = new Task[Flows];
        for (int i = 0; i < Flows; i++) tasks[i] = PerfClientOperations.UploadAsync(_tcpStreams[i], FlowBytes, last: false, _scratch[i]);
        return Task.WhenAll(tasks);
    }

    [Benchmark(Description = "100 streams, managed")]
    public Task Managed()
    {
        _wire!.Count();
        return QuicFlows();
    }

    [Benchmark(Description = "100 streams, msquic")]
    public Task MsQuic() => QuicFlows();

    private Task QuicFlows()
    {
        var tasks = new Task[Flows];
        for (int i = 0; i < Flows; i++) tasks[i] = OneStreamAsync(_connections[0], _scratch[i]);
        return Task.WhenAll(tasks);
    }

    private static async Task OneStreamAsync(PerfClientConnection connection, byte[] scratch)
    {
        await using Stream stream = await connection.OpenStreamAsync(default).ConfigureAwait(false);
        await PerfClientOperations.UploadAsync(stream, FlowBytes, last: true, scratch).ConfigureAwait(false);
    }

    private static byte[][] CreateScratch()
    {
        var scratch = new byte[Flows][];
        for (int i = 0; i < Flows; i++) scratch[i] = new byte[8 * 1024];
        return scratch;
    }
}
