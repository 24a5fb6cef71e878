using System.Globalization;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Datagrams, lost packets and UDP bytes per benchmark operation of the managed stack, from the process-wide
/// <see cref="QuicTelemetryCounters"/> (both ends: client and server share the benchmark process). The benchmark runs
/// in a child process, so the figures travel to the host's <see cref="WireStatsColumn"/> through a file.
/// </summary>
internal readonly record struct WireStats(double DatagramsPerOp, double LostPerOp, double BytesPerOp, long Operations)
{
    public static readonly string Directory = Path.Combine(Path.GetTempPath(), "QuicManaged.Benchmarks.wire");

    public static string FileFor(string type, string method, string parameters)
        => Path.Combine(Directory, $"{type}.{method}.{(parameters.Length == 0 ? "-" : parameters)}.txt");

    public void Save(string type, string method, string parameters)
    {
        IO.Directory.CreateDirectory(Directory);
        File.WriteAllText(FileFor(type, method, parameters), string.Create(CultureInfo.InvariantCulture,
            $"{DatagramsPerOp:R} {LostPerOp:R} {BytesPerOp:R} {Operations}"));
    }

    public static WireStats? Load(string type, string method, string parameters)
    {
        string path = FileFor(type, method, parameters);
        if (!File.Exists(path)) return null;
        string[] parts = File.ReadAllText(path).Split(' ');
        if (parts.Length != 4) return null;
        return new WireStats(
            double.Parse(parts[0], CultureInfo.InvariantCulture),
            double.Parse(parts[1], CultureInfo.InvariantCulture),
            double.Parse(parts[2], CultureInfo.InvariantCulture),
            long.Parse(parts[3], CultureInfo.InvariantCulture));
    }
}
