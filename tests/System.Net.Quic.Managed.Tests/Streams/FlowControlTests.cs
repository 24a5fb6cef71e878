using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

public class FlowControlTests
{
    [Fact]
    public void SendCreditTracksLimitAndOnlyGrows()
    {
        var credit = new SendFlowCredit(100);
        Assert.Equal(100, credit.Available);
        credit.AddSent(60);
        Assert.Equal(40, credit.Available);
        Assert.False(credit.OnMaxDataReceived(90)); // reordered smaller MAX_DATA is ignored
        Assert.Equal(100, credit.MaxData);
        Assert.True(credit.OnMaxDataReceived(150));
        Assert.Equal(90, credit.Available);
        Assert.Throws<InvalidOperationException>(() => credit.AddSent(91));
    }

    [Fact]
    public void BlockedSignalledOncePerLimit()
    {
        var credit = new SendFlowCredit(100);
        Assert.False(credit.NeedsBlockedFrame);
        credit.AddSent(100);
        Assert.True(credit.NeedsBlockedFrame);
        credit.OnBlockedFrameSent(100);
        Assert.False(credit.NeedsBlockedFrame);
        credit.OnBlockedFrameLost(100); // still blocked at 100: send again
        Assert.True(credit.NeedsBlockedFrame);
        credit.OnBlockedFrameSent(100);
        credit.OnMaxDataReceived(200);
        credit.OnBlockedFrameLost(100); // a stale limit: not repeated
        Assert.False(credit.NeedsBlockedFrame);
        credit.AddSent(100);
        Assert.True(credit.NeedsBlockedFrame); // blocked at a new limit
    }

    [Fact]
    public void ReceiveBeyondAdvertisedLimitIsFlowControlError()
    {
        var window = new ReceiveFlowWindow(1000, 4000);
        Assert.Equal(TransportErrorCode.NoError, window.OnReceived(1000));
        Assert.Equal(TransportErrorCode.FlowControlError, window.OnReceived(1001));
        Assert.Equal(1000, window.Received);
        Assert.Equal(TransportErrorCode.NoError, window.OnReceived(500)); // lower offsets don't move it back
        Assert.Equal(1000, window.Received);

        var connection = new ReceiveFlowWindow(100, 100);
        Assert.Equal(TransportErrorCode.NoError, connection.OnReceivedDelta(60));
        Assert.Equal(TransportErrorCode.FlowControlError, connection.OnReceivedDelta(41));
        Assert.Equal(TransportErrorCode.NoError, connection.OnReceivedDelta(40));
    }

    [Fact]
    public void UpdateDueAfterHalfTheWindowIsConsumed()
    {
        var window = new ReceiveFlowWindow(1000, 1000);
        window.OnReceived(1000);
        window.OnConsumed(500);
        Assert.False(window.ShouldSendUpdate);
        window.OnConsumed(1);
        Assert.True(window.ShouldSendUpdate);
        Assert.Equal(1501, window.CommitUpdate(nowUs: 0, smoothedRttUs: 10_000));
        Assert.False(window.ShouldSendUpdate);
        Assert.Throws<InvalidOperationException>(() => window.OnConsumed(500)); // more than received
    }

    private static int GrowthSteps(long usPerWindow, int rounds)
    {
        // The app reads one window-half per step, spending usPerWindow per window; RTT 10 ms.
        var window = new ReceiveFlowWindow(10_000, 160_000);
        long now = 0;
        window.StartEpoch(now);
        int grown = 0;
        for (int i = 0; i < rounds; i++)
        {
            long chunk = window.Window / 2 + 1;
            window.OnReceived(window.Consumed + chunk);
            window.OnConsumed(chunk);
            now += usPerWindow * chunk / window.Window;
            Assert.True(window.ShouldSendUpdate);
            long before = window.Window;
            long max = window.CommitUpdate(now, smoothedRttUs: 10_000);
            Assert.Equal(window.Consumed + window.Window, max);
            if (window.Window > before)
            {
                grown++;
            }
        }

        return grown;
    }

    [Fact]
    public void AutoTuningGrowsWhenReadsAreFast()
    {
        // Half a window per 5 ms = a window per RTT: well under 2 RTTs per half window -> doubles to the cap.
        Assert.Equal(4, GrowthSteps(usPerWindow: 10_000, rounds: 10)); // 10k -> 20k -> 40k -> 80k -> 160k (cap)
    }

    [Fact]
    public void AutoTuningDoesNotGrowWhenReadsAreSlow()
    {
        // A window per 10 RTTs: the reader, not the window, is the bottleneck.
        Assert.Equal(0, GrowthSteps(usPerWindow: 100_000, rounds: 10));
    }

    [Fact]
    public void AutoTuningNeedsAnRttAndRespectsMaximum()
    {
        var window = new ReceiveFlowWindow(1000, 1500);
        window.StartEpoch(0);
        window.OnReceived(1000);
        window.OnConsumed(1000);
        window.CommitUpdate(1, smoothedRttUs: 0); // no RTT sample: no growth
        Assert.Equal(1000, window.Window);
        window.OnReceived(2000);
        window.OnConsumed(1000);
        window.CommitUpdate(2, smoothedRttUs: 1000);
        Assert.Equal(1500, window.Window); // doubled but capped
        window.EnsureMinimumWindow(10_000);
        Assert.Equal(1500, window.Window);
    }
}
