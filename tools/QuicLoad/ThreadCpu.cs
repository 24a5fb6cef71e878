using System.Globalization;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>CPU time of a process's threads chosen by name, from /proc/self/task (Linux only).</summary>
internal static class ThreadCpu
{
    /// <summary>
    /// Seconds of user and system CPU spent so far by this process's live threads whose name starts with
    /// <paramref name="prefix"/>; -1 where /proc is absent. Threads that ended take their time with them, so compare two
    /// readings only across a window in which the threads of interest live throughout.
    /// </summary>
    public static double SecondsOfThreadsNamed(string prefix)
    {
        const string tasks = "/proc/self/task";
        if (!Directory.Exists(tasks)) return -1;
        long ticks = 0;
        foreach (string task in Directory.EnumerateDirectories(tasks))
        {
            try
            {
                if (!File.ReadAllText(Path.Combine(task, "comm")).StartsWith(prefix, StringComparison.Ordinal)) continue;
                // stat: "pid (comm) state ..." - fields after the closing parenthesis; utime and stime are fields 14 and 15.
                string stat = File.ReadAllText(Path.Combine(task, "stat"));
                string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                ticks += long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
            }
            catch (IOException)
            {
                // The thread ended between the listing and the read.
            }
        }
        return ticks / 100.0; // USER_HZ is 100 on Linux
    }
}
