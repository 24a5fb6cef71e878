using System.Diagnostics;
using System.Runtime.InteropServices;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>
/// The relay: one thread, one ppoll over both TUN fds whose timeout is the earliest release time of either direction,
/// so packets leave within the scheduler's resolution without a sleep or timer per packet.
/// </summary>
internal sealed unsafe class EmulatorLoop
{
    private const int MaxPacket = 65536;
    private readonly EmulatorOptions _options;
    private volatile bool _stop;
    private volatile bool _dumpRequested;

    public EmulatorLoop(EmulatorOptions options)
    {
        _options = options;
    }

    public void RequestStop() => _stop = true;

    public void RequestDump() => _dumpRequested = true;

    private static long NowUs() => (long)(Stopwatch.GetTimestamp() * (1_000_000.0 / Stopwatch.Frequency));

    public int Run()
    {
        var random = new Random(_options.Seed);
        var aToB = new LinkDirection(_options.Impairment.Clone(), random);
        var bToA = new LinkDirection(_options.Impairment.Clone(), random);
        using TunDevice a = TunDevice.Create(_options.TunA);
        using TunDevice b = TunDevice.Create(_options.TunB);
        Console.Error.WriteLine($"LinkEmulator: {a.Name} <-> {b.Name} up (seed {_options.Seed}); move the devices into their namespaces now.");

        byte[] buffer = new byte[MaxPacket];
        LibC.PollFd* fds = stackalloc LibC.PollFd[2];
        long startUs = NowUs();
        long endUs = _options.DurationSeconds > 0 ? startUs + (long)(_options.DurationSeconds * 1_000_000) : long.MaxValue;
        long statsIntervalUs = (long)(_options.StatsIntervalSeconds * 1_000_000);
        long nextStatsUs = statsIntervalUs > 0 ? startUs + statsIntervalUs : long.MaxValue;

        while (!_stop)
        {
            long nowUs = NowUs();
            if (nowUs >= endUs)
            {
                break;
            }

            if (_dumpRequested || (_options.StatsJsonPath is not null && nowUs >= nextStatsUs))
            {
                if (_dumpRequested)
                {
                    _dumpRequested = false;
                    using Stream errorStream = Console.OpenStandardError();
                    StatsReport.Write(errorStream, _options, aToB, bToA, (nowUs - startUs) / 1e6, final: false);
                    errorStream.WriteByte((byte)'\n');
                }

                WriteStats(aToB, bToA, (nowUs - startUs) / 1e6, final: false);
                nextStatsUs = nowUs + statsIntervalUs;
            }

            // Wake for the next release, the next stats write, the end, or at least every 100 ms to see signals.
            long wakeUs = Math.Min(Math.Min(aToB.NextReleaseUs, bToA.NextReleaseUs), Math.Min(endUs, nextStatsUs));
            wakeUs = Math.Min(wakeUs, nowUs + 100_000);
            long waitUs = Math.Max(0, wakeUs - nowUs);
            LibC.TimeSpec timeout = new() { Seconds = waitUs / 1_000_000, Nanoseconds = (waitUs % 1_000_000) * 1000 };
            fds[0] = new LibC.PollFd { Fd = a.Fd, Events = LibC.POLLIN };
            fds[1] = new LibC.PollFd { Fd = b.Fd, Events = LibC.POLLIN };
            int ready = LibC.PPoll(fds, 2, &timeout, null);
            if (ready < 0 && Marshal.GetLastPInvokeError() != LibC.EINTR)
            {
                throw new IOException($"ppoll failed: errno {Marshal.GetLastPInvokeError()}");
            }

            nowUs = NowUs();
            if (ready > 0)
            {
                if ((fds[0].REvents & LibC.POLLIN) != 0)
                {
                    Drain(a, aToB, buffer, nowUs);
                }

                if ((fds[1].REvents & LibC.POLLIN) != 0)
                {
                    Drain(b, bToA, buffer, nowUs);
                }
            }

            // With zero delay a packet read above is due now and leaves in this same iteration.
            Release(aToB, b, buffer, nowUs);
            Release(bToA, a, buffer, nowUs);
        }

        double elapsed = (NowUs() - startUs) / 1e6;
        WriteStats(aToB, bToA, elapsed, final: true);
        using Stream stderr = Console.OpenStandardError();
        StatsReport.Write(stderr, _options, aToB, bToA, elapsed, final: true);
        stderr.WriteByte((byte)'\n');
        return 0;
    }

    private static void Drain(TunDevice from, LinkDirection direction, byte[] buffer, long nowUs)
    {
        // Bounded so that a flood on one side cannot starve the other side or the release step.
        for (int i = 0; i < 256; i++)
        {
            int n = from.Read(buffer);
            if (n <= 0)
            {
                return;
            }

            direction.Submit(buffer.AsSpan(0, n), nowUs);
        }
    }

    private static void Release(LinkDirection direction, TunDevice to, byte[] buffer, long nowUs)
    {
        while (direction.TryRelease(nowUs, buffer, out int length))
        {
            if (!to.Write(buffer.AsSpan(0, length)))
            {
                direction.RecordWriteFailure(length);
            }
        }
    }

    private void WriteStats(LinkDirection aToB, LinkDirection bToA, double elapsedSeconds, bool final)
    {
        if (_options.StatsJsonPath is not null)
        {
            StatsReport.WriteFile(_options.StatsJsonPath, _options, aToB, bToA, elapsedSeconds, final);
        }
    }
}
