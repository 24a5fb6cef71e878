using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Shared config of the transport benchmarks: the wire-statistics columns, operations per second, and rows removed
/// for providers that cannot run here (the reason is printed by <see cref="Program"/>).
/// Benchmark methods are named after the provider: TcpTls (baseline), Managed, MsQuic.
/// </summary>
internal sealed class TransportBenchmarkConfig : ManualConfig
{
    public TransportBenchmarkConfig()
    {
        AddColumn(WireStatsColumn.All);
        AddColumn(StatisticColumn.OperationsPerSecond);
        AddFilter(new SimpleFilter(benchmarkCase => IsRunnable(benchmarkCase.Descriptor.WorkloadMethod.Name)));
    }

    public static bool IsRunnable(string methodName) => methodName switch
    {
        "MsQuic" => PerfTransport.IsAvailable(PerfTransportKind.MsQuic, out _),
        "Managed" => PerfTransport.IsAvailable(PerfTransportKind.Managed, out _),
        _ => true,
    };
}
