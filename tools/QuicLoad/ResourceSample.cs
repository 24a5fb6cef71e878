using System.Diagnostics;
using System.Globalization;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>One reading of the process's resources and of the run's counters.</summary>
public sealed record ResourceSample(
    double Seconds,
    long RssBytes,
    long GcHeapBytes,
    int Threads,
    int OpenFds,
    long Connections,
    long Streams,
    long Bytes,
    long Failures)
{
    /// <summary>This process's resident set size in bytes (Linux: /proc/self/status; elsewhere the working set).</summary>
    public static long ReadRss()
    {
        if (!OperatingSystem.IsLinux())
        {
            using Process self = Process.GetCurrentProcess();
            return self.WorkingSet64;
        }

        foreach (string line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture) * 1024;
            }
        }

        return -1;
    }

    /// <summary>Reads the process now (Linux: /proc/self; elsewhere what <see cref="Process"/> offers, fds -1).</summary>
    public static ResourceSample Take(double seconds, LoadCounters counters)
    {
        long rss = -1;
        int threads = -1;
        int fds = -1;
        if (OperatingSystem.IsLinux())
        {
            // At the process's descriptor limit (the run itself may have used them all) /proc cannot be opened: the
            // sample then says -1 for what it could not read instead of ending the run.
            try
            {
                rss = ReadRss();
                foreach (string line in File.ReadLines("/proc/self/status"))
                {
                    if (line.StartsWith("Threads:", StringComparison.Ordinal))
                    {
                        threads = int.Parse(line.AsSpan(8).Trim(), CultureInfo.InvariantCulture);
                    }
                }

                fds = Directory.GetFileSystemEntries("/proc/self/fd").Length;
            }
            catch (IOException)
            {
            }
        }
        else
        {
            using Process self = Process.GetCurrentProcess();
            rss = self.WorkingSet64;
            threads = self.Threads.Count;
        }

        return new ResourceSample(
            seconds, rss, GC.GetTotalMemory(forceFullCollection: false), threads, fds,
            counters.Connections, counters.Streams, counters.Bytes, counters.Failures + counters.ServerFailures);
    }
}
