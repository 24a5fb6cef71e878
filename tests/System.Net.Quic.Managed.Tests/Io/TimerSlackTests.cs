using System.Net.Quic.Managed.Io;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>Driver threads sleep with a minimal timer slack, so a poll timeout ends when it is due
/// (<see cref="WakeSignal.PollTimeoutUs"/> sleeps for every timer but the nearest ones).</summary>
public class TimerSlackTests
{
    [SkippableFact]
    public void DriverLoopThreadsRunWithOneNanosecondSlack()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "timer slack is a Linux thread attribute (prctl PR_SET_TIMERSLACK)");
        long slack = 0;
        using var done = new ManualResetEventSlim();
        DriverThreadPool.Run(() => { slack = LinuxUdpInterop.GetTimerSlackNs(); done.Set(); }, "test slack");
        Assert.True(done.Wait(TimeSpan.FromSeconds(5)));
        Assert.Equal(1, slack);

        // Other threads keep the default (50 us); the call changes only its own thread.
        Assert.NotEqual(1, LinuxUdpInterop.GetTimerSlackNs());
    }

    [Theory]
    [InlineData(-1, -1)]
    [InlineData(0, 0)]
    [InlineData(WakeSignal.SpinBelowUs - 1, 0)]
    [InlineData(WakeSignal.SpinBelowUs, WakeSignal.SpinBelowUs)]
    [InlineData(1_000, 1_000)]   // an ACK delay of a millisecond is slept, not spun through
    public void PollTimeout_SpinsOnlyForTheNearestTimers(int waitUs, int expected)
        => Assert.Equal(expected, WakeSignal.PollTimeoutUs(waitUs));
}
