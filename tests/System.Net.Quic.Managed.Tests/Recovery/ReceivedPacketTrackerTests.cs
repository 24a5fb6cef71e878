using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class ReceivedPacketTrackerTests
{
    private static AckRange[] RangesOf(ReceivedPacketTracker t)
    {
        var buffer = new AckRange[64];
        int n = t.WriteAckRanges(buffer);
        return buffer.AsSpan(0, n).ToArray();
    }

    private static AckRange R(long smallest, long largest) => new(smallest, largest);

    [Fact]
    public void InOrder_OneRange()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        for (int pn = 0; pn < 5; pn++)
        {
            Assert.True(t.OnPacketReceived(pn, true, pn));
        }

        Assert.Equal(new[] { R(0, 4) }, RangesOf(t));
        Assert.Equal(4, t.LargestReceived);
    }

    [Fact]
    public void Gaps_LargestFirst_AndFillingMerges()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        foreach (long pn in new long[] { 0, 1, 3, 5, 6 })
        {
            t.OnPacketReceived(pn, false, 0);
        }

        Assert.Equal(new[] { R(5, 6), R(3, 3), R(0, 1) }, RangesOf(t));
        t.OnPacketReceived(4, false, 0);
        Assert.Equal(new[] { R(3, 6), R(0, 1) }, RangesOf(t));
        t.OnPacketReceived(2, false, 0);
        Assert.Equal(new[] { R(0, 6) }, RangesOf(t));
        t.OnPacketReceived(10, false, 0);
        t.OnPacketReceived(8, false, 0);
        t.OnPacketReceived(9, false, 0);
        Assert.Equal(new[] { R(8, 10), R(0, 6) }, RangesOf(t));
    }

    [Fact]
    public void Duplicates_AreRejected_AndDoNotCount()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        Assert.True(t.OnPacketReceived(3, true, 0, EcnCodepoint.Ect0));
        Assert.False(t.OnPacketReceived(3, true, 0, EcnCodepoint.Ect0));
        Assert.Equal(1, t.AckElicitingSinceLastAck);
        Assert.Equal(new EcnCounts(1, 0, 0), t.EcnCounts);
        Assert.Equal(new[] { R(3, 3) }, RangesOf(t));
        Assert.False(t.OnPacketReceived(-1, true, 0));
    }

    [Fact]
    public void EcnCounts_PerCodepoint()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.Handshake);
        t.OnPacketReceived(0, true, 0, EcnCodepoint.Ect0);
        t.OnPacketReceived(1, true, 0, EcnCodepoint.Ect1);
        t.OnPacketReceived(2, true, 0, EcnCodepoint.Ce);
        t.OnPacketReceived(3, true, 0, EcnCodepoint.Ce);
        t.OnPacketReceived(4, true, 0, EcnCodepoint.NotEct);
        Assert.Equal(new EcnCounts(1, 1, 2), t.EcnCounts);
    }

    [Fact]
    public void RangeCount_IsBounded_OldestDropped_AndTreatedAsSeen()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxRanges: 4);
        foreach (long pn in new long[] { 0, 2, 4, 6, 8 })
        {
            t.OnPacketReceived(pn, false, 0);
        }

        Assert.Equal(new[] { R(8, 8), R(6, 6), R(4, 4), R(2, 2) }, RangesOf(t));
        Assert.False(t.OnPacketReceived(0, false, 0)); // forgotten range: old packets are dropped as duplicates
        t.OnPacketReceived(10, false, 0);
        Assert.Equal(4, t.RangeCount);
        Assert.Equal(new[] { R(10, 10), R(8, 8), R(6, 6), R(4, 4) }, RangesOf(t));
        Assert.False(t.OnPacketReceived(2, false, 0)); // the dropped [2,2]
        Assert.True(t.OnPacketReceived(3, false, 0)); // above the dropped range: still tracked, merges into [3,4]
        Assert.Equal(new[] { R(10, 10), R(8, 8), R(6, 6), R(3, 4) }, RangesOf(t));
    }

    [Fact]
    public void RangeStorage_StartsSmall_GrowsToTheBound_ThenDropsTheOldest()
    {
        // The tracker starts with InitialRanges slots (what an idle connection keeps) and grows to maxRanges.
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxRanges: 10);
        for (long pn = 0; pn < 20; pn += 2)
        {
            t.OnPacketReceived(pn, false, 0);
        }

        Assert.True(10 > ReceivedPacketTracker.InitialRanges);
        Assert.Equal(10, t.RangeCount); // every gap kept past the initial slots
        Assert.Equal(R(18, 18), RangesOf(t)[0]);
        Assert.Equal(R(0, 0), RangesOf(t)[^1]);
        t.OnPacketReceived(20, false, 0);
        Assert.Equal(10, t.RangeCount); // at the bound the oldest goes
        Assert.Equal(R(2, 2), RangesOf(t)[^1]);
        Assert.False(t.OnPacketReceived(0, false, 0));
    }

    [Fact]
    public void WriteAckRanges_ShortSpan_GetsMostRecent()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        foreach (long pn in new long[] { 0, 2, 4 })
        {
            t.OnPacketReceived(pn, false, 0);
        }

        Span<AckRange> two = stackalloc AckRange[2];
        Assert.Equal(2, t.WriteAckRanges(two));
        Assert.Equal(R(4, 4), two[0]);
        Assert.Equal(R(2, 2), two[1]);
    }

    [Fact]
    public void AckPolicy_EverySecondAckElicitingPacket_OtherwiseMaxAckDelay()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxAckDelayUs: 25_000);
        t.OnPacketReceived(0, true, 1_000);
        Assert.False(t.AckImmediately);
        Assert.Equal(26_000, t.AckDeadlineUs);
        Assert.False(t.ShouldSendAck(25_999));
        Assert.True(t.ShouldSendAck(26_000));

        t.OnPacketReceived(1, true, 2_000);
        Assert.True(t.AckImmediately);
        Assert.Equal(2_000, t.AckDeadlineUs);

        t.OnAckSent();
        Assert.False(t.ShouldSendAck(1_000_000));
        Assert.Equal(RecoveryConstants.NoTime, t.AckDeadlineUs);
        Assert.Equal(0, t.AckElicitingSinceLastAck);
    }

    // Receives packets pn..pn+count-1, one every `gapUs` from `nowUs`, acknowledging whenever an ACK is due at once;
    // returns the ACKs sent.
    private static int ReceiveRun(ReceivedPacketTracker t, ref long pn, ref long nowUs, int count, long gapUs, long rttUs)
    {
        int acks = 0;
        for (int i = 0; i < count; i++, pn++, nowUs += gapUs)
        {
            t.OnPacketReceived(pn, true, nowUs, rttUs: rttUs);
            if (t.AckImmediately)
            {
                t.OnAckSent();
                acks++;
            }
        }
        return acks;
    }

    [Fact]
    public void Decimation_EverySecondPacketForTheFirstHundred()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, decimate: true);
        long pn = 0, now = 0;
        Assert.Equal(50, ReceiveRun(t, ref pn, ref now, ReceivedPacketTracker.DecimationAfterPackets, gapUs: 10, rttUs: 1_000));
        Assert.Equal(ReceivedPacketTracker.AckElicitingThreshold, t.CurrentThreshold);
    }

    [Theory]
    [InlineData(100, 2)]    // 10 packets per round trip: a quarter is 2 (the RFC's every second)
    [InlineData(20, 12)]    // 50 per round trip: 12
    [InlineData(5, 32)]     // 200 per round trip: capped
    public void Decimation_ThresholdIsAQuarterOfARoundTripOfPackets(long gapUs, int expected)
    {
        const long rtt = 1_000;
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, decimate: true);
        long pn = 0, now = 0;
        ReceiveRun(t, ref pn, ref now, ReceivedPacketTracker.DecimationAfterPackets + 1_000, gapUs, rtt);
        Assert.Equal(expected, t.CurrentThreshold);

        // In steady state one ACK goes per `expected` packets.
        int acks = ReceiveRun(t, ref pn, ref now, expected * 20, gapUs, rtt);
        Assert.Equal(20, acks);
    }

    [Fact]
    public void Decimation_DelayIsAQuarterRoundTrip_AtLeastTheGranularity_AtMostMaxAckDelay()
    {
        foreach ((long rtt, long expectedDelay) in new[] { (40_000L, 10_000L), (400L, RecoveryConstants.GranularityUs), (400_000L, 25_000L) })
        {
            var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxAckDelayUs: 25_000, decimate: true);
            long pn = 0, now = 0;
            ReceiveRun(t, ref pn, ref now, ReceivedPacketTracker.DecimationAfterPackets + 1, gapUs: 1, rtt);
            t.OnAckSent();
            t.OnPacketReceived(pn, true, now, rttUs: rtt);
            Assert.False(t.AckImmediately);
            Assert.Equal(now + expectedDelay, t.AckDeadlineUs);
        }
    }

    [Fact]
    public void Decimation_GapAndCe_StillAcknowledgedAtOnce()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, decimate: true);
        long pn = 0, now = 0;
        ReceiveRun(t, ref pn, ref now, ReceivedPacketTracker.DecimationAfterPackets + 1_000, gapUs: 5, rttUs: 1_000);
        Assert.Equal(ReceivedPacketTracker.MaxDecimatedThreshold, t.CurrentThreshold);
        t.OnAckSent();

        t.OnPacketReceived(pn + 1, true, now, rttUs: 1_000); // pn missing: a loss the sender must hear of at once
        Assert.True(t.AckImmediately);
        t.OnAckSent();
        t.OnPacketReceived(pn + 2, true, now, EcnCodepoint.Ce, 1_000);
        Assert.True(t.AckImmediately);
    }

    [Fact]
    public void Decimation_Off_AndNeverInTheHandshakeSpaces()
    {
        foreach (var t in new[]
        {
            new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, decimate: false),
            new ReceivedPacketTracker(PacketNumberSpace.Handshake, decimate: true),
        })
        {
            long pn = 0, now = 0;
            int acks = ReceiveRun(t, ref pn, ref now, 1_000, gapUs: 5, rttUs: 1_000);
            Assert.True(acks >= 500, $"{t.Space}: {acks} ACKs for 1,000 packets");
        }
    }

    [Fact]
    public void AckPolicy_NonAckElicitingAlone_NeverTriggersAnAck()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        for (int pn = 0; pn < 10; pn++)
        {
            t.OnPacketReceived(pn, false, 0);
        }

        Assert.False(t.ShouldSendAck(long.MaxValue - 1));
        Assert.True(t.HasNewPacketsToAck);
    }

    [Fact]
    public void AckPolicy_GapOrReorderOrCe_IsImmediate()
    {
        var gap = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        gap.OnPacketReceived(0, true, 0);
        gap.OnAckSent();
        gap.OnPacketReceived(2, true, 0);
        Assert.True(gap.AckImmediately);

        var reorder = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        reorder.OnPacketReceived(0, true, 0);
        reorder.OnPacketReceived(5, false, 0); // non-ack-eliciting gap does not itself trigger
        Assert.False(reorder.AckImmediately);
        reorder.OnAckSent();
        reorder.OnPacketReceived(6, true, 0);
        reorder.OnAckSent();
        reorder.OnPacketReceived(3, true, 0); // below the largest ack-eliciting packet
        Assert.True(reorder.AckImmediately);

        var ce = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        ce.OnPacketReceived(0, true, 0, EcnCodepoint.Ce);
        Assert.True(ce.AckImmediately);
    }

    // RFC 9000 §13.2.1: the gap rule looks at the largest ack-eliciting packet, not at non-ack-eliciting ones.
    [Fact]
    public void AckPolicy_GapMeasuredFromLargestAckElicitingPacket()
    {
        var gap = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        gap.OnPacketReceived(0, true, 0);
        gap.OnAckSent();
        gap.OnPacketReceived(5, false, 0);
        gap.OnPacketReceived(6, true, 0); // 1..4 missing below 6 since ack-eliciting 0
        Assert.True(gap.AckImmediately);

        var contiguous = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        contiguous.OnPacketReceived(0, true, 0);
        contiguous.OnAckSent();
        contiguous.OnPacketReceived(1, false, 0);
        contiguous.OnPacketReceived(2, true, 0);
        Assert.False(contiguous.AckImmediately);
        Assert.Equal(RecoveryConstants.DefaultMaxAckDelayUs, contiguous.AckDeadlineUs);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public void AckPolicy_HandshakeSpaces_AreImmediate(int space)
    {
        var t = new ReceivedPacketTracker((PacketNumberSpace)space);
        t.OnPacketReceived(0, true, 500);
        Assert.True(t.AckImmediately);
        Assert.True(t.ShouldSendAck(500));
    }

    [Fact]
    public void AckDelay_MeasuredFromLargestPacketArrival()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        t.OnPacketReceived(5, true, 1_000);
        t.OnPacketReceived(3, true, 4_000); // older packet: does not move the reference time
        Assert.Equal(5_000, t.GetAckDelayUs(6_000));
        t.OnPacketReceived(6, true, 5_500);
        Assert.Equal(500, t.GetAckDelayUs(6_000));
    }

    [Fact]
    public void AckOfAck_PrunesRangesAtOrBelowLargestAcked()
    {
        var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        foreach (long pn in new long[] { 0, 1, 3, 4, 5, 8, 9, 10 })
        {
            t.OnPacketReceived(pn, false, 0);
        }

        t.OnAckOfAck(4);
        Assert.Equal(new[] { R(8, 10), R(5, 5) }, RangesOf(t));
        Assert.False(t.OnPacketReceived(2, true, 0));
        Assert.True(t.OnPacketReceived(6, true, 0));
        Assert.Equal(new[] { R(8, 10), R(5, 6) }, RangesOf(t));
        t.OnAckOfAck(10);
        Assert.Empty(RangesOf(t));
        Assert.Equal(10, t.LargestReceived);
    }

    // Randomized: duplicate detection and the written ranges equal a HashSet model's (no range limit hit).
    [Fact]
    public void Randomized_MatchesHashSetModel()
    {
        var rng = new Random(13_2);
        for (int round = 0; round < 300; round++)
        {
            var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxRanges: 1000);
            var seen = new HashSet<long>();
            long baseline = 0;
            for (int i = 0; i < 200; i++)
            {
                long pn = Math.Max(0, baseline + rng.Next(-10, 12));
                baseline += rng.Next(0, 3);
                bool isNew = t.OnPacketReceived(pn, rng.Next(2) == 0, i);
                Assert.Equal(seen.Add(pn), isNew);
            }

            Assert.Equal(ModelRanges(seen), RangesOf(t, 1000));
        }
    }

    // Randomized with a small range limit: never acknowledges an unreceived packet, keeps the newest ranges.
    [Fact]
    public void Randomized_BoundedRanges_AreSoundAndRecent()
    {
        var rng = new Random(32);
        for (int round = 0; round < 300; round++)
        {
            var t = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData, maxRanges: 4);
            var seen = new HashSet<long>();
            for (int i = 0; i < 200; i++)
            {
                long pn = rng.Next(0, 300);
                if (t.OnPacketReceived(pn, true, i))
                {
                    Assert.True(seen.Add(pn), "a packet accepted twice");
                }

                AckRange[] ranges = RangesOf(t, 8);
                Assert.True(ranges.Length <= 4);
                for (int r = 0; r < ranges.Length; r++)
                {
                    Assert.True(r == 0 || ranges[r].Largest < ranges[r - 1].Smallest - 1, "ranges descending, disjoint, non-adjacent");
                    for (long p = ranges[r].Smallest; p <= ranges[r].Largest; p++)
                    {
                        Assert.Contains(p, seen);
                    }
                }

                Assert.Equal(t.LargestReceived, ranges[0].Largest);
            }
        }
    }

    private static AckRange[] RangesOf(ReceivedPacketTracker t, int capacity)
    {
        var buffer = new AckRange[capacity];
        int n = t.WriteAckRanges(buffer);
        return buffer.AsSpan(0, n).ToArray();
    }

    private static AckRange[] ModelRanges(HashSet<long> seen)
    {
        var sorted = new List<long>(seen);
        sorted.Sort();
        sorted.Reverse();
        var result = new List<AckRange>();
        int i = 0;
        while (i < sorted.Count)
        {
            long hi = sorted[i];
            long lo = hi;
            while (i + 1 < sorted.Count && sorted[i + 1] == lo - 1)
            {
                i++;
                lo--;
            }

            result.Add(new AckRange(lo, hi));
            i++;
        }

        return result.ToArray();
    }
}
