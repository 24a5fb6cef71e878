using BenchmarkDotNet.Attributes;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// One payload uploaded over one long-lived stream on loopback, until the server has read all of it and answered
/// one byte. The connection (and the stream) are set up in GlobalSetup: this measures the transfer, not the handshake.
/// Baseline: SslStream over TCP, so Ratio reads against it.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
[Config(typeof(TransportBenchmarkConfig))]
public class StreamTransferBenchmarks
{
    private LoopbackPair _pair = null!;
    private PerfClientConnection _connection = null!;
    private Stream _stream = null!;
    private readonly byte[] _scratch = new byte[64 * 1024];
    private WireStatsRecorder? _wire;

    [Params(64 * 1024, 1024 * 1024, 32 * 1024 * 1024)]
    public int PayloadSize { get; set; }

    [GlobalSetup(Target = nameof(TcpTls))]
    public void SetupTcpTls() => Setup(PerfTransportKind.TcpTls);

    [GlobalSetup(Target = nameof(Managed))]
    public void SetupManaged()
    {
        Setup(PerfTransportKind.Managed);
        _wire = new WireStatsRecorder();
    }

    [GlobalSetup(Target = nameof(MsQuic))]
    public void SetupMsQuic() => Setup(PerfTransportKind.MsQuic);

    private void Setup(PerfTransportKind kind)
    {
        _pair = LoopbackPair.Start(kind);
        _connection = _pair.Connect();
        _stream = _connection.OpenStreamAsync(default).AsTask().GetAwaiter().GetResult();
        // One round trip so the stream exists on both ends before measuring.
        PerfClientOperations.UploadAsync(_stream, 1, last: false, _scratch).GetAwaiter().GetResult();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _wire?.Save(nameof(StreamTransferBenchmarks), nameof(Managed), PayloadSize.ToString(Globalization.CultureInfo.InvariantCulture));
        _connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _pair.Dispose();
    }

    [Benchmark(Baseline = true, Description = "SslStream/TCP")]
    public Task TcpTls() => PerfClientOperations.UploadAsync(_stream, PayloadSize, last: false, _scratch);

    [Benchmark(Description = "QuicStream (managed)")]
    public Task Managed()
    {
        _wire!.Count();
        return PerfClientOperations.UploadAsync(_stream, PayloadSize, last: false, _scratch);
    }

    [Benchmark(Description = "System.Net.Quic (msquic)")]
    public Task MsQuic() => PerfClientOperations.UploadAsync(_stream, PayloadSize, last: false, _scratch);
}
