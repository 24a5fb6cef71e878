using BenchmarkDotNet.Running;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

public static class Program
{
    public static void Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--profile-loop")
        {
            ProfileLoop.Run(args[1], int.Parse(args[2], Globalization.CultureInfo.InvariantCulture));
            return;
        }
        // Say up front which provider rows will be missing and why (TransportBenchmarkConfig filters them out).
        foreach (PerfTransportKind kind in new[] { PerfTransportKind.Managed, PerfTransportKind.MsQuic })
        {
            if (!PerfTransport.IsAvailable(kind, out string reason))
            {
                Console.WriteLine($"// {PerfTransport.DisplayName(kind)} rows are omitted: {reason}");
            }
        }
        // Per-operation wire statistics come back from the benchmark processes through these files.
        if (Directory.Exists(WireStats.Directory)) Directory.Delete(WireStats.Directory, recursive: true);
        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
