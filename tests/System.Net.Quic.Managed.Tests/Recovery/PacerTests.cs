using System.Net.Quic.Managed.Recovery;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class PacerTests
{
    private const long Cwnd = 12_000;
    private const long Srtt = 100_000;

    [Fact]
    public void Burst_OfTenPackets_ThenPaced()
    {
        var p = new Pacer(1200, burstPackets: 10);
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal(0, p.GetNextSendTimeUs(1200, 0, Cwnd, Srtt, false));
            p.OnPacketSent(1200, 0, Cwnd, Srtt, false);
        }

        // Rate 1.25 * 12000 B / 100 ms = 0.15 B/us: 1200 B takes 8 ms.
        Assert.Equal(8_000, p.GetNextSendTimeUs(1200, 0, Cwnd, Srtt, false));
        // Slow start paces at 2 * cwnd / srtt: 5 ms.
        Assert.Equal(5_000, p.GetNextSendTimeUs(1200, 0, Cwnd, Srtt, true));
        Assert.Equal(8_000, p.GetNextSendTimeUs(1200, 4_000, Cwnd, Srtt, false)); // half refilled by 4 ms
        // Slow start: 4 ms * 0.24 B/us = 960 B, the missing 240 B take 1 ms more.
        Assert.Equal(5_000, p.GetNextSendTimeUs(1200, 4_000, Cwnd, Srtt, true));
    }

    [Fact]
    public void Refill_IsCappedAtBurst()
    {
        var p = new Pacer(1200, 10);
        p.OnPacketSent(12_000, 0, Cwnd, Srtt, false);
        Assert.Equal(0, p.Tokens);
        Assert.Equal(1_000_000, p.GetNextSendTimeUs(1200, 1_000_000, Cwnd, Srtt, false));
        p.OnPacketSent(0, 10_000_000, Cwnd, Srtt, false);
        Assert.Equal(12_000, p.Tokens);
    }

    [Fact]
    public void Burst_GrowsToAMillisecondOfTheRate_UpToMaxBurstPackets()
    {
        // 1.25 * 120,000 B / 10 ms = 15 B/us: a millisecond is 15,000 B, above the 10-packet minimum.
        var p = new Pacer(1200, 10);
        p.OnPacketSent(0, 0, 120_000, 10_000, false);
        p.OnPacketSent(0, 1_000_000, 120_000, 10_000, false);
        Assert.Equal(15_000, p.Tokens);

        // A sub-millisecond round trip: the burst is capped at 64 packets, and the window is what limits the sender.
        var fast = new Pacer(1200, 10);
        fast.OnPacketSent(0, 0, 1_000_000, 200, false);
        fast.OnPacketSent(0, 1_000_000, 1_000_000, 200, false);
        Assert.Equal(Pacer.MaxBurstPackets * 1200, fast.Tokens);
        for (int i = 0; i < Pacer.MaxBurstPackets; i++)
        {
            Assert.Equal(1_000_000, fast.GetNextSendTimeUs(1200, 1_000_000, 1_000_000, 200, false));
            fast.OnPacketSent(1200, 1_000_000, 1_000_000, 200, false);
        }
        Assert.True(fast.GetNextSendTimeUs(1200, 1_000_000, 1_000_000, 200, false) > 1_000_000);
    }

    [Fact]
    public void SustainedRate_MatchesOnePointTwoFiveCwndPerRtt()
    {
        var p = new Pacer(1200, 10);
        long now = 0;
        long sent = 0;
        while (true)
        {
            long next = p.GetNextSendTimeUs(1200, now, Cwnd, Srtt, false);
            if (next > 1_000_000)
            {
                break;
            }

            now = next;
            p.OnPacketSent(1200, now, Cwnd, Srtt, false);
            sent += 1200;
        }

        // 1 s = 10 RTTs: 1.25 * 12000 * 10 = 150000 B plus the 12000 B initial burst, within one packet.
        Assert.InRange(sent, 162_000 - 1200, 162_000 + 1200);
    }

    [Fact]
    public void HugeValues_DoNotOverflow()
    {
        var fast = new Pacer(1200, 10);
        fast.OnPacketSent(12_000, 0, long.MaxValue / 4, 1, false);
        Assert.Equal(long.MaxValue / 2, fast.GetNextSendTimeUs(1200, long.MaxValue / 2, long.MaxValue / 4, 1, false));

        var slow = new Pacer(1200, 10);
        slow.OnPacketSent(12_000, 0, 1, long.MaxValue / 4, false);
        Assert.Equal(long.MaxValue, slow.GetNextSendTimeUs(1200, 1, 1, long.MaxValue / 4, false));
    }
}
