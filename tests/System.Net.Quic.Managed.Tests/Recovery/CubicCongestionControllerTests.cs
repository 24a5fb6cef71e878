using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class CubicCongestionControllerTests
{
    private const int Mds = 1200;

    private static RttEstimator RttOf(long rttUs)
    {
        var rtt = new RttEstimator();
        rtt.OnSample(rttUs, 0, true, 0, 0);
        return rtt;
    }

    // Slow start up to W segments, then a congestion event at lossTimeUs.
    private static CubicCongestionController GrowThenLose(double wSegments, long lossTimeUs, RttEstimator rtt)
    {
        var cc = new CubicCongestionController(Mds);
        long target = (long)(wSegments * Mds);
        cc.OnPacketsAcked(target - cc.CongestionWindow, 0, cc.CongestionWindow, 0, rtt);
        Assert.Equal(target, cc.CongestionWindow);
        cc.OnCongestionEvent(lossTimeUs - 1, lossTimeUs);
        return cc;
    }

    // A cwnd-limited sender: every step ACKs 1/stepsPerRtt of the window, for packets sent one RTT earlier.
    private static void Run(CubicCongestionController cc, RttEstimator rtt, ref long nowUs, long untilUs, int stepsPerRtt = 20)
    {
        long step = rtt.SmoothedRttUs / stepsPerRtt;
        while (nowUs < untilUs)
        {
            nowUs += step;
            long acked = Math.Max(1, cc.CongestionWindow / stepsPerRtt);
            cc.OnPacketsAcked(acked, nowUs - rtt.SmoothedRttUs, cc.CongestionWindow, nowUs, rtt);
        }
    }

    [Fact]
    public void Loss_ReducesToBetaTimesW_AndComputesK()
    {
        var cc = GrowThenLose(100, 1_000_000, RttOf(100_000));
        Assert.Equal(84_000, cc.CongestionWindow); // 0.7 * 100 * 1200
        Assert.Equal(84_000, cc.SlowStartThreshold);
        Assert.Equal(100, cc.WMaxSegments, 9);
        // RFC 9438 Figure 2: K = cbrt((W_max - cwnd_epoch) / C) = cbrt(30 / 0.4) = cbrt(75).
        Assert.Equal(4.217163326508746, cc.KSeconds, 9);
        Assert.False(cc.InSlowStart);
    }

    [Fact]
    public void WCubic_FormulaPoints()
    {
        double k = CubicCongestionController.ComputeK(100, 70);
        Assert.Equal(70, CubicCongestionController.WCubic(0, k, 100), 9); // starts at cwnd_epoch
        Assert.Equal(100, CubicCongestionController.WCubic(k, k, 100), 9); // plateau at W_max
        Assert.Equal(100 + 0.4 * 8, CubicCongestionController.WCubic(k + 2, k, 100), 9);
        Assert.Equal(0, CubicCongestionController.ComputeK(50, 60));
    }

    [Fact]
    public void OneReductionPerRecoveryPeriod_LossBurst()
    {
        var cc = GrowThenLose(100, 1_000_000, RttOf(100_000));
        for (int i = 0; i < 10; i++)
        {
            cc.OnCongestionEvent(900_000 + i, 1_050_000); // packets of the same flight
        }

        Assert.Equal(84_000, cc.CongestionWindow);
        cc.OnCongestionEvent(1_000_001, 1_200_000); // sent after recovery began: new event
        Assert.Equal((long)(84_000 * 0.7), cc.CongestionWindow);
    }

    // RFC 9438 §4.2: in the concave and convex regions the window follows W_cubic(t). The sender chases
    // W_cubic(t + RTT) one RTT ahead, so the window at t tracks W_cubic(t); allow 0.5 % of W_max (one segment).
    [Theory]
    [InlineData(0.5)]
    [InlineData(1.0)]
    [InlineData(1.5)]
    [InlineData(2.0)]
    public void ConcaveAndConvexGrowth_FollowsWCubic(double timesK)
    {
        RttEstimator rtt = RttOf(200_000);
        var cc = GrowThenLose(200, 1_000_000, rtt);
        long now = 1_000_000;
        Run(cc, rtt, ref now, 1_000_000 + 2 * rtt.SmoothedRttUs); // leave recovery, start the epoch
        Assert.NotEqual(long.MinValue, cc.EpochStartUs);
        double k = cc.KSeconds;
        long until = cc.EpochStartUs + (long)(timesK * k * 1e6);
        Run(cc, rtt, ref now, until);

        double t = (now - cc.EpochStartUs) / 1e6;
        double expected = CubicCongestionController.WCubic(t, k, 200);
        double actual = cc.CongestionWindow / (double)Mds;
        Assert.True(Math.Abs(actual - expected) <= 0.005 * 200, $"t={t:F2}s cwnd={actual:F2} W_cubic={expected:F2}");
        Assert.True(actual > cc.RenoEstimateSegments, "must be in the CUBIC region, not Reno-friendly");
    }

    [Fact]
    public void RecoveryAfterLossBurst_ClimbsBackToWMaxAroundK_ThenProbesBeyond()
    {
        RttEstimator rtt = RttOf(100_000);
        var cc = GrowThenLose(100, 1_000_000, rtt);
        cc.OnCongestionEvent(999_000, 1_010_000);
        cc.OnCongestionEvent(999_500, 1_020_000);
        Assert.Equal(84_000, cc.CongestionWindow);

        long now = 1_020_000;
        Run(cc, rtt, ref now, 1_300_000);
        long kUs = (long)(cc.KSeconds * 1e6);
        Run(cc, rtt, ref now, cc.EpochStartUs + kUs);
        double atK = cc.CongestionWindow / (double)Mds;
        Assert.InRange(atK, 98.0, 101.0);

        Run(cc, rtt, ref now, cc.EpochStartUs + kUs + 3_000_000);
        Assert.True(cc.CongestionWindow / (double)Mds > 105, "convex region probes beyond W_max");
    }

    // RFC 9438 §4.3: with a small window and short RTT Reno grows faster than W_cubic; cwnd follows W_est.
    [Fact]
    public void RenoFriendlyRegion_FollowsWEst()
    {
        RttEstimator rtt = RttOf(10_000);
        var cc = GrowThenLose(20, 1_000_000, rtt);
        long now = 1_000_000;
        Run(cc, rtt, ref now, 1_000_000 + 2 * rtt.SmoothedRttUs);
        long epoch = cc.EpochStartUs;
        Run(cc, rtt, ref now, epoch + 1_000_000);

        double t = (now - epoch) / 1e6;
        double cwnd = cc.CongestionWindow / (double)Mds;
        Assert.True(cwnd > CubicCongestionController.WCubic(t, cc.KSeconds, 20) + 10);
        Assert.Equal(cc.RenoEstimateSegments, cwnd, 0.01);

        // W_est: alpha_cubic = 3*0.3/1.7 per RTT from 14 to cwnd_prior (20) segments, then 1 per RTT.
        double rtts = t / 0.010;
        double rttsAtAlpha = (20 - 14) / CubicCongestionController.RenoFriendlyAlpha;
        double expected = 20 + (rtts - rttsAtAlpha);
        Assert.InRange(cwnd, expected * 0.95, expected * 1.05);
    }

    [Fact]
    public void FastConvergence_LowersWMaxWhenWindowShrankSinceLastLoss()
    {
        RttEstimator rtt = RttOf(100_000);
        var cc = GrowThenLose(100, 1_000_000, rtt);
        Assert.Equal(100, cc.WMaxSegments, 9);
        // Second loss at 70 segments < W_max: W_max = 70 * (1 + 0.7) / 2 = 59.5.
        cc.OnCongestionEvent(2_000_000, 2_000_001);
        Assert.Equal(59.5, cc.WMaxSegments, 9);
        Assert.InRange(cc.CongestionWindow, 58_799, 58_800); // 0.7 * 70 * 1200, floating point floor

        // Without fast convergence triggers: a loss above W_max sets W_max to the window.
        var cc2 = GrowThenLose(100, 1_000_000, rtt);
        long now = 1_000_000;
        Run(cc2, rtt, ref now, 1_300_000);
        Run(cc2, rtt, ref now, cc2.EpochStartUs + (long)(cc2.KSeconds * 1e6) + 2_000_000);
        double w = cc2.CongestionWindow / (double)Mds;
        Assert.True(w > 100);
        cc2.OnCongestionEvent(now - 1, now);
        Assert.Equal(w, cc2.WMaxSegments, 0.001); // cwnd is read back floored to whole bytes
    }

    [Fact]
    public void ApplicationLimited_DoesNotGrowInCongestionAvoidance()
    {
        RttEstimator rtt = RttOf(100_000);
        var cc = GrowThenLose(100, 1_000_000, rtt);
        long before = cc.CongestionWindow;
        for (long now = 1_200_000; now < 5_000_000; now += 10_000)
        {
            cc.OnPacketsAcked(1200, now - 100_000, priorBytesInFlight: 12_000, now, rtt);
        }

        Assert.Equal(before, cc.CongestionWindow);
    }

    [Fact]
    public void IdlePeriod_ShiftsTheEpoch()
    {
        RttEstimator rtt = RttOf(100_000);
        var cc = GrowThenLose(100, 1_000_000, rtt);
        long now = 1_000_000;
        Run(cc, rtt, ref now, 1_500_000);
        long epoch = cc.EpochStartUs;
        cc.OnPacketSent(1200, now + 5_000_000); // nothing in flight: 5 s idle
        Assert.Equal(epoch + 5_000_000, cc.EpochStartUs);
    }

    [Fact]
    public void PersistentCongestion_MinimumWindow_ThenSlowStart()
    {
        RttEstimator rtt = RttOf(100_000);
        var cc = GrowThenLose(100, 1_000_000, rtt);
        cc.OnPersistentCongestion(2_000_000);
        Assert.Equal(2 * Mds, cc.CongestionWindow);
        Assert.True(cc.InSlowStart);
        cc.OnPacketsAcked(2 * Mds, 2_500_000, 2 * Mds, 2_600_000, rtt);
        Assert.Equal(4 * Mds, cc.CongestionWindow);
    }
}
