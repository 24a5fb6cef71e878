using System.Diagnostics;

namespace System.Net.Quic.Managed.Io;

/// <summary>The one real clock: microseconds since an arbitrary start, monotonic. Only Io reads it; the core is given times.</summary>
internal static class MonotonicClock
{
    private static readonly long s_frequency = Stopwatch.Frequency;

    // Linux reports nanosecond ticks: one division by a constant then (the driver reads the clock on every loop turn).
    private static readonly long s_ticksPerUs = s_frequency % 1_000_000 == 0 ? s_frequency / 1_000_000 : 0;

    public static long NowUs
    {
        get
        {
            long ticks = Stopwatch.GetTimestamp();
            if (s_ticksPerUs != 0) return ticks / s_ticksPerUs;
            // Split to avoid overflow of ticks * 1e6 on high-frequency timers.
            return ticks / s_frequency * 1_000_000 + ticks % s_frequency * 1_000_000 / s_frequency;
        }
    }
}
