using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Setup shared by the benchmarks that run many flows at once over loopback. QUIC (managed, msquic): one connection,
/// each flow a new stream. Baseline SslStream/TCP: one connection per flow, set up in GlobalSetup (TCP cannot
/// multiplex one connection). The derived class says what one flow does; the method names are the provider names
/// <see cref="TransportBenchmarkConfig"/> filters on.
/// </summary>
public abstract class ConcurrentFlowsBenchmarkBase
{
    private LoopbackPair _pair = null!;
    private WireStatsRecorder? _wire;

    protected ConcurrentFlowsBenchmarkBase(int flows)
    {
        Flows = flows;
        Scratch = new byte[flows][];
        for (int i = 0; i < flows; i++) Scratch[i] = new byte[8 * 1024];
    }

    /// <summary>Flows in flight per benchmark invocation.</summary>
    protected int Flows { get; }

    /// <summary>TCP: one connection per flow. QUIC: the single connection at index 0.</summary>
    protected List<PerfClientConnection> Connections { get; } = new();

    /// <summary>TCP: the stream of each flow's connection, reused by every invocation.</summary>
    protected List<Stream> TcpStreams { get; } = new();

    /// <summary>A private I/O buffer per flow.</summary>
    protected byte[][] Scratch { get; }

    /// <summary>Wire statistics per operation (managed only): the derived benchmark counts its operations here.</summary>
    private protected WireStatsRecorder Wire => _wire!;

    public abstract Task TcpTls();

    public abstract Task Managed();

    public abstract Task MsQuic();

    [GlobalSetup(Target = nameof(TcpTls))]
    public void SetupTcpTls()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.TcpTls);
        for (int i = 0; i < Flows; i++)
        {
            PerfClientConnection connection = _pair.Connect();
            Connections.Add(connection);
            TcpStreams.Add(connection.OpenStreamAsync(default).AsTask().GetAwaiter().GetResult());
        }
    }

    [GlobalSetup(Target = nameof(Managed))]
    public void SetupManaged()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.Managed);
        Connections.Add(_pair.Connect());
        _wire = new WireStatsRecorder();
    }

    [GlobalSetup(Target = nameof(MsQuic))]
    public void SetupMsQuic()
    {
        _pair = LoopbackPair.Start(PerfTransportKind.MsQuic);
        Connections.Add(_pair.Connect());
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _wire?.Save(BenchmarkTypeName(), nameof(Managed), "");
        foreach (PerfClientConnection connection in Connections) connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Connections.Clear();
        TcpStreams.Clear();
        _pair.Dispose();
    }

    /// <summary>
    /// The benchmark class's name, which <see cref="WireStatsColumn"/> looks the figures up by. Not GetType().Name: in
    /// the benchmark process BenchmarkDotNet runs a generated subclass of it (Runnable_N).
    /// </summary>
    private string BenchmarkTypeName()
    {
        Type type = GetType();
        while (type.BaseType is { } parent && parent != typeof(ConcurrentFlowsBenchmarkBase)) type = parent;
        return type.Name;
    }

    /// <summary>Runs <see cref="Flows"/> flows at once, each on a new stream of the QUIC connection.</summary>
    protected Task RunQuicFlows(Func<Stream, byte[], Task> flow)
    {
        var tasks = new Task[Flows];
        for (int i = 0; i < Flows; i++) tasks[i] = OneStreamAsync(Connections[0], Scratch[i], flow);
        return Task.WhenAll(tasks);
    }

    /// <summary>Runs <see cref="Flows"/> flows at once, each on its own TCP connection's stream.</summary>
    protected Task RunTcpFlows(Func<Stream, byte[], Task> flow)
    {
        var tasks = new Task[Flows];
        for (int i = 0; i < Flows; i++) tasks[i] = flow(TcpStreams[i], Scratch[i]);
        return Task.WhenAll(tasks);
    }

    private static async Task OneStreamAsync(PerfClientConnection connection, byte[] scratch, Func<Stream, byte[], Task> flow)
    {
        await using Stream stream = await connection.OpenStreamAsync(default).ConfigureAwait(false);
        await flow(stream, scratch).ConfigureAwait(false);
    }
}
