using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class NewRenoCongestionControllerTests
{
    private static readonly RttEstimator Rtt = new();

    [Theory]
    [InlineData(1200, 12_000)]
    [InlineData(1500, 14_720)]
    [InlineData(9000, 18_000)]
    public void InitialWindow_PerRfc9002(int mds, long expected)
    {
        Assert.Equal(expected, new NewRenoCongestionController(mds).CongestionWindow);
        Assert.Equal(2L * mds, RecoveryConstants.MinimumWindow(mds));
    }

    [Fact]
    public void SlowStart_GrowsByAckedBytes()
    {
        var cc = new NewRenoCongestionController(1200);
        for (int i = 0; i < 10; i++)
        {
            cc.OnPacketSent(1200, 0);
        }

        Assert.False(cc.CanSend(1));
        cc.OnPacketsAcked(12_000, 0, 12_000, 100, Rtt);
        Assert.Equal(24_000, cc.CongestionWindow);
        Assert.True(cc.InSlowStart);
        Assert.Equal(0, cc.BytesInFlight);
        Assert.True(cc.CanSend(24_000));
        Assert.False(cc.CanSend(24_001));
    }

    [Fact]
    public void Loss_HalvesOncePerRecoveryPeriod()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnCongestionEvent(timeSentUs: 100, nowUs: 200);
        Assert.Equal(6_000, cc.CongestionWindow);
        Assert.Equal(6_000, cc.SlowStartThreshold);
        Assert.True(cc.IsInRecovery(200));

        cc.OnCongestionEvent(timeSentUs: 150, nowUs: 300); // sent before recovery started: same event
        cc.OnCongestionEvent(timeSentUs: 200, nowUs: 300);
        Assert.Equal(6_000, cc.CongestionWindow);

        cc.OnCongestionEvent(timeSentUs: 201, nowUs: 400); // sent during recovery: a new event
        Assert.Equal(3_000, cc.CongestionWindow);
        cc.OnCongestionEvent(500, 600);
        Assert.Equal(2_400, cc.CongestionWindow); // minimum window
    }

    [Fact]
    public void NoGrowth_ForPacketsSentBeforeRecoveryStarted()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnCongestionEvent(100, 200);
        cc.OnPacketsAcked(6_000, largestAckedTimeSentUs: 199, priorBytesInFlight: 6_000, nowUs: 300, Rtt);
        Assert.Equal(6_000, cc.CongestionWindow);
    }

    [Fact]
    public void CongestionAvoidance_OneDatagramPerWindowAcked()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnCongestionEvent(100, 200); // cwnd = ssthresh = 6000
        Assert.False(cc.InSlowStart);
        cc.OnPacketsAcked(3_600, 300, 6_000, 400, Rtt);
        Assert.Equal(6_000, cc.CongestionWindow);
        cc.OnPacketsAcked(2_400, 300, 6_000, 400, Rtt);
        Assert.Equal(7_200, cc.CongestionWindow);
        // Over many windows: +1 datagram per window's worth of ACKs.
        for (int i = 0; i < 6; i++)
        {
            cc.OnPacketsAcked(1_200, 300, cc.CongestionWindow, 400, Rtt);
        }

        Assert.Equal(8_400, cc.CongestionWindow);
    }

    [Fact]
    public void PersistentCongestion_MinimumWindow_AndRecoveryReset()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnCongestionEvent(100, 1_000);
        cc.OnPersistentCongestion(1_000);
        Assert.Equal(2_400, cc.CongestionWindow);
        Assert.False(cc.IsInRecovery(500));
        // Below ssthresh (6000): slow start again, even for packets sent before the old recovery start.
        cc.OnPacketsAcked(2_400, 500, 2_400, 2_000, Rtt);
        Assert.Equal(4_800, cc.CongestionWindow);
    }

    [Fact]
    public void ApplicationLimited_DoesNotGrow()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnPacketSent(1200, 0);
        cc.OnPacketsAcked(1200, 0, priorBytesInFlight: 1200, nowUs: 100, Rtt);
        Assert.Equal(12_000, cc.CongestionWindow);
        Assert.Equal(0, cc.BytesInFlight);
    }

    [Fact]
    public void LostAndDiscarded_LeaveFlight()
    {
        var cc = new NewRenoCongestionController(1200);
        cc.OnPacketSent(1200, 0);
        cc.OnPacketSent(1000, 0);
        cc.OnPacketsLost(1200);
        Assert.Equal(1000, cc.BytesInFlight);
        cc.OnPacketsDiscarded(1000);
        Assert.Equal(0, cc.BytesInFlight);
        Assert.Equal(12_000, cc.CongestionWindow);
    }
}
