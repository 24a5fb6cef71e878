using System.Globalization;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>
/// CPU time per OS thread of this process from /proc/self/task (Linux only): a first, cheap answer to "which
/// thread burns the CPU" (UDP driver threads, thread-pool workers running the app side, TLS, GC).
/// </summary>
public sealed class ThreadCpuSnapshot
{
    // USER_HZ: the unit of utime/stime in /proc/<pid>/task/<tid>/stat; 100 on every mainstream Linux build.
    private const double TicksPerSecond = 100.0;

    private readonly Dictionary<int, (string Name, long Ticks)> _threads = new();

    private ThreadCpuSnapshot()
    {
    }

    public static ThreadCpuSnapshot? Take()
    {
        if (!OperatingSystem.IsLinux() || !Directory.Exists("/proc/self/task")) return null;
        var snapshot = new ThreadCpuSnapshot();
        foreach (string dir in Directory.EnumerateDirectories("/proc/self/task"))
        {
            try
            {
                if (!int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out int tid)) continue;
                string stat = File.ReadAllText(Path.Combine(dir, "stat"));
                // The name is in parentheses and may contain spaces: fields after the last ')' are space-separated.
                int close = stat.LastIndexOf(')');
                int open = stat.IndexOf('(');
                string name = stat.Substring(open + 1, close - open - 1);
                string[] fields = stat[(close + 2)..].Split(' ');
                // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
                long ticks = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
                snapshot._threads[tid] = (name, ticks);
            }
            catch (IOException)
            {
                // The thread ended while we read it.
            }
        }
        return snapshot;
    }

    /// <summary>Threads whose CPU time grew since <paramref name="before"/>, busiest first: (name, seconds).</summary>
    public List<(string Name, double Seconds)> Since(ThreadCpuSnapshot before)
    {
        // Group by name: thread-pool workers all share one name, which is the useful granularity here.
        var byName = new Dictionary<string, double>();
        foreach (var (tid, (name, ticks)) in _threads)
        {
            long start = before._threads.TryGetValue(tid, out var b) ? b.Ticks : 0;
            double seconds = (ticks - start) / TicksPerSecond;
            if (seconds <= 0) continue;
            byName[name] = byName.GetValueOrDefault(name) + seconds;
        }
        var list = new List<(string Name, double Seconds)>();
        foreach (var (name, seconds) in byName) list.Add((name, seconds));
        list.Sort(static (x, y) => y.Seconds.CompareTo(x.Seconds));
        return list;
    }
}
