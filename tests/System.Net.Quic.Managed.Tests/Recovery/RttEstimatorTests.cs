using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class RttEstimatorTests
{
    [Fact]
    public void InitialState_UsesKInitialRtt_AndPtoIsAboutOneSecond()
    {
        var rtt = new RttEstimator();
        Assert.False(rtt.HasSample);
        Assert.Equal(333_000, rtt.SmoothedRttUs);
        Assert.Equal(166_500, rtt.RttVarUs);
        // RFC 9002 §6.2.2: 333 ms + 4 * 166.5 ms = 999 ms.
        Assert.Equal(999_000, rtt.PtoBaseUs);
    }

    [Fact]
    public void FirstSample_SetsAllAndIgnoresAckDelay()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(100_000, ackDelayUs: 50_000, handshakeConfirmed: true, maxAckDelayUs: 25_000, nowUs: 7);
        Assert.True(rtt.HasSample);
        Assert.Equal(7, rtt.FirstSampleTimeUs);
        Assert.Equal(100_000, rtt.LatestRttUs);
        Assert.Equal(100_000, rtt.MinRttUs);
        Assert.Equal(100_000, rtt.SmoothedRttUs);
        Assert.Equal(50_000, rtt.RttVarUs);
    }

    [Fact]
    public void SecondSample_SubtractsAckDelay_EwmaByHand()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(100_000, 0, false, 25_000, 0);
        rtt.OnSample(120_000, 10_000, false, 25_000, 1);
        // adjusted = 120 - 10 = 110 ms; rttvar = 3/4*50 + 1/4*|100-110| = 40 ms; srtt = 7/8*100 + 1/8*110 = 101.25 ms.
        Assert.Equal(100_000, rtt.MinRttUs);
        Assert.Equal(40_000, rtt.RttVarUs);
        Assert.Equal(101_250, rtt.SmoothedRttUs);
        Assert.Equal(120_000, rtt.LatestRttUs);
    }

    [Fact]
    public void AckDelay_NotSubtractedBelowMinRtt()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(100_000, 0, true, 25_000, 0);
        rtt.OnSample(105_000, 10_000, true, 25_000, 1);
        // 105 < min_rtt(100) + 10: adjusted stays 105. rttvar = 37.5 + 1.25 = 38.75; srtt = 87.5 + 13.125 = 100.625.
        Assert.Equal(38_750, rtt.RttVarUs);
        Assert.Equal(100_625, rtt.SmoothedRttUs);
    }

    [Fact]
    public void AckDelay_CappedByMaxAckDelay_OnlyAfterHandshakeConfirmed()
    {
        var before = new RttEstimator();
        before.OnSample(100_000, 0, false, 25_000, 0);
        before.OnSample(200_000, 60_000, false, 25_000, 1);
        // Not confirmed: the full 60 ms is subtracted: adjusted 140; rttvar = 37.5 + 10 = 47.5; srtt = 87.5 + 17.5 = 105.
        Assert.Equal(47_500, before.RttVarUs);
        Assert.Equal(105_000, before.SmoothedRttUs);

        var after = new RttEstimator();
        after.OnSample(100_000, 0, true, 25_000, 0);
        after.OnSample(200_000, 60_000, true, 25_000, 1);
        // Confirmed: capped at 25 ms: adjusted 175; rttvar = 37.5 + 18.75 = 56.25; srtt = 87.5 + 21.875 = 109.375.
        Assert.Equal(56_250, after.RttVarUs);
        Assert.Equal(109_375, after.SmoothedRttUs);
    }

    [Fact]
    public void MinRtt_TracksRawSamples()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(100_000, 0, true, 25_000, 0);
        rtt.OnSample(80_000, 0, true, 25_000, 1);
        rtt.OnSample(150_000, 100_000, true, 25_000, 2);
        Assert.Equal(80_000, rtt.MinRttUs);
    }

    [Fact]
    public void LossDelay_IsNineEighthsOfMaxRtt_AtLeastGranularity()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(80_000, 0, true, 0, 0);
        rtt.OnSample(160_000, 0, true, 0, 1); // srtt = 70 + 20 = 90 ms, latest 160 ms
        Assert.Equal(180_000, rtt.LossDelayUs);

        var tiny = new RttEstimator();
        tiny.OnSample(100, 0, true, 0, 0);
        Assert.Equal(RecoveryConstants.GranularityUs, tiny.LossDelayUs);
    }

    [Fact]
    public void Reset_ReturnsToInitialRtt()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(10_000, 0, true, 0, 0);
        rtt.Reset();
        Assert.False(rtt.HasSample);
        Assert.Equal(333_000, rtt.SmoothedRttUs);
    }

    [Fact]
    public void PersistentCongestion_RestartsMinRttFromLatestSample()
    {
        var rtt = new RttEstimator();
        rtt.OnSample(50_000, 0, true, 0, 0);
        rtt.OnSample(200_000, 0, true, 0, 1);
        Assert.Equal(50_000, rtt.MinRttUs);
        rtt.OnPersistentCongestion();
        Assert.Equal(200_000, rtt.MinRttUs);
    }
}
