using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>Host-side column showing one <see cref="WireStats"/> figure for the managed rows ("-" elsewhere).</summary>
internal sealed class WireStatsColumn : IColumn
{
    public enum Figure
    {
        Datagrams,
        Lost,
        WireBytes,
    }

    private readonly Figure _figure;

    public WireStatsColumn(Figure figure) => _figure = figure;

    public static IColumn[] All { get; } =
    {
        new WireStatsColumn(Figure.Datagrams),
        new WireStatsColumn(Figure.Lost),
        new WireStatsColumn(Figure.WireBytes),
    };

    public string Id => "WireStats." + _figure;

    public string ColumnName => _figure switch
    {
        Figure.Datagrams => "Datagrams/op",
        Figure.Lost => "Lost/op",
        _ => "Wire/op",
    };

    public bool AlwaysShow => true;

    public ColumnCategory Category => ColumnCategory.Custom;

    public int PriorityInCategory => (int)_figure;

    public bool IsNumeric => true;

    public UnitType UnitType => _figure == Figure.WireBytes ? UnitType.Size : UnitType.Dimensionless;

    public string Legend => _figure switch
    {
        Figure.Datagrams => "UDP datagrams sent per operation by the managed stack, both directions (QuicTelemetryCounters.DatagramsSent)",
        Figure.Lost => "Packets declared lost per operation by the managed stack (QuicTelemetryCounters.PacketsLost)",
        _ => "UDP payload bytes sent per operation by the managed stack, both directions (QuicTelemetryCounters.BytesSent)",
    };

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        WireStats? stats = WireStats.Load(
            benchmarkCase.Descriptor.Type.Name,
            benchmarkCase.Descriptor.WorkloadMethod.Name,
            ParameterKey(benchmarkCase));
        if (stats is not { } s) return "-";
        return _figure switch
        {
            Figure.Datagrams => s.DatagramsPerOp.ToString("N1", CultureInfo.InvariantCulture),
            Figure.Lost => s.LostPerOp.ToString("N2", CultureInfo.InvariantCulture),
            _ => FormatBytes(s.BytesPerOp),
        };
    }

    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    public bool IsAvailable(Summary summary) => true;

    public override string ToString() => ColumnName;

    /// <summary>The parameter values joined by '_', the same string the child computes in its GlobalCleanup.</summary>
    public static string ParameterKey(BenchmarkCase benchmarkCase)
    {
        var parts = new List<string>();
        foreach (var item in benchmarkCase.Parameters.Items)
        {
            parts.Add(Convert.ToString(item.Value, CultureInfo.InvariantCulture) ?? "");
        }
        return string.Join("_", parts);
    }

    private static string FormatBytes(double bytes) => bytes switch
    {
        >= 1024 * 1024 => (bytes / (1024 * 1024)).ToString("N2", CultureInfo.InvariantCulture) + " MiB",
        >= 1024 => (bytes / 1024).ToString("N1", CultureInfo.InvariantCulture) + " KiB",
        _ => bytes.ToString("N0", CultureInfo.InvariantCulture) + " B",
    };
}
