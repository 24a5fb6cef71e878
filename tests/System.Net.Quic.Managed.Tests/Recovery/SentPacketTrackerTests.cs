using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;
using AckRange = System.Net.Quic.Managed.Wire.AckRange;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class SentPacketTrackerTests
{
    private static SentPacketTracker<int> SendRange(long from, long to, long timeStepUs = 1_000, int size = 1200)
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData, 8);
        for (long pn = from; pn <= to; pn++)
        {
            t.OnPacketSent(pn, pn * timeStepUs, size, ackEliciting: true, inFlight: true, (int)pn * 10);
        }

        return t;
    }

    private static AckRange[] Ranges(params (long Smallest, long Largest)[] r)
    {
        var a = new AckRange[r.Length];
        for (int i = 0; i < r.Length; i++)
        {
            a[i] = new AckRange(r[i].Smallest, r[i].Largest);
        }

        return a;
    }

    [Fact]
    public void Ack_ReportsNewlyAckedAscending_WithMeta_AndUpdatesLargest()
    {
        var t = SendRange(0, 9);
        var sink = RecordingSink.Create();
        AckProcessingResult r = t.OnAckReceived(Ranges((7, 9), (2, 4)), ref sink);
        Assert.False(r.IsError);
        Assert.Equal(new long[] { 2, 3, 4, 7, 8, 9 }, sink.Acked);
        Assert.Equal(new[] { 20, 30, 40, 70, 80, 90 }, sink.Metas);
        Assert.Equal(6, r.NewlyAckedCount);
        Assert.Equal(6 * 1200, r.NewlyAckedInFlightBytes);
        Assert.Equal(9, r.LargestNewlyAckedPacketNumber);
        Assert.Equal(9_000, r.LargestNewlyAckedTimeSentUs);
        Assert.True(r.ShouldSampleRtt);
        Assert.Equal(9, t.LargestAcked);
        Assert.Equal(4 * 1200, t.BytesInFlight);
        Assert.Equal(4, t.AckElicitingInFlight);
    }

    [Fact]
    public void Ack_Again_IsNotNewAndTakesNoRttSample()
    {
        var t = SendRange(0, 5);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((0, 5)), ref sink);
        sink.Acked.Clear();
        AckProcessingResult r = t.OnAckReceived(Ranges((0, 5)), ref sink);
        Assert.False(r.IsError);
        Assert.Empty(sink.Acked);
        Assert.Equal(0, r.NewlyAckedCount);
        Assert.False(r.ShouldSampleRtt);
    }

    [Fact]
    public void RttSample_OnlyWhenLargestNewlyAcked_AndSomethingAckEliciting()
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData);
        t.OnPacketSent(0, 0, 100, ackEliciting: false, inFlight: false, 0);
        t.OnPacketSent(1, 1, 1200, ackEliciting: true, inFlight: true, 0);
        t.OnPacketSent(2, 2, 100, ackEliciting: false, inFlight: false, 0);
        var sink = RecordingSink.Create();

        // Only non-ack-eliciting packets: no sample (RFC 9002 §5.1).
        AckProcessingResult r = t.OnAckReceived(Ranges((2, 2), (0, 0)), ref sink);
        Assert.True(r.LargestAckedIsNewlyAcked);
        Assert.False(r.ShouldSampleRtt);

        // Largest (2) not newly acked although 1 is ack-eliciting: no sample.
        r = t.OnAckReceived(Ranges((0, 2)), ref sink);
        Assert.Equal(1, r.NewlyAckedCount);
        Assert.False(r.LargestAckedIsNewlyAcked);
        Assert.False(r.ShouldSampleRtt);
    }

    [Fact]
    public void Ack_OfNeverSentPacket_IsProtocolViolation_AndChangesNothing()
    {
        var t = SendRange(0, 4);
        var sink = RecordingSink.Create();
        AckProcessingResult r = t.OnAckReceived(Ranges((5, 5), (0, 3)), ref sink);
        Assert.Equal(TransportErrorCode.ProtocolViolation, r.Error);
        Assert.NotNull(r.Reason);
        Assert.Empty(sink.Acked);
        Assert.Equal(-1, t.LargestAcked);
        Assert.Equal(5, t.OutstandingCount);
    }

    [Fact]
    public void Ack_OfSkippedPacketNumber_IsProtocolViolation_InWindowAndAfterItLeftTheWindow()
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData);
        t.OnPacketSent(0, 0, 1200, true, true, 0);
        t.OnPacketSent(1, 0, 1200, true, true, 0);
        t.OnPacketSent(3, 0, 1200, true, true, 0); // 2 skipped
        t.OnPacketSent(4, 0, 1200, true, true, 0);
        var sink = RecordingSink.Create();
        Assert.Equal(TransportErrorCode.ProtocolViolation, t.OnAckReceived(Ranges((0, 4)), ref sink).Error);
        Assert.Empty(sink.Acked);

        // Ack 0,1 and 3: the front of the ring (0..3) is released, 4 still outstanding.
        Assert.False(t.OnAckReceived(Ranges((3, 3), (0, 1)), ref sink).IsError);
        Assert.Equal(TransportErrorCode.ProtocolViolation, t.OnAckReceived(Ranges((2, 4)), ref sink).Error);
        Assert.Equal(1, t.OutstandingCount);
    }

    [Fact]
    public void Ack_MalformedRanges_IsFrameEncodingError()
    {
        var t = SendRange(0, 9);
        var sink = RecordingSink.Create();
        Assert.Equal(TransportErrorCode.FrameEncodingError, t.OnAckReceived(Ranges((2, 4), (7, 9)), ref sink).Error);
        Assert.Equal(TransportErrorCode.FrameEncodingError, t.OnAckReceived(Ranges((5, 3)), ref sink).Error);
        Assert.Equal(TransportErrorCode.FrameEncodingError, t.OnAckReceived(Ranges((3, 5), (1, 3)), ref sink).Error);
        Assert.Equal(TransportErrorCode.FrameEncodingError, t.OnAckReceived(ReadOnlySpan<AckRange>.Empty, ref sink).Error);
        Assert.Empty(sink.Acked);
    }

    [Fact]
    public void Ack_HugeRangeFromAttacker_TouchesOnlyTheWindow()
    {
        var t = SendRange(0, 1_009);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((0, 999)), ref sink);
        Assert.Equal(TransportErrorCode.ProtocolViolation, t.OnAckReceived(Ranges((0, (1L << 62) - 1)), ref sink).Error);
        AckProcessingResult r = t.OnAckReceived(Ranges((0, 1_009)), ref sink);
        Assert.False(r.IsError);
        Assert.Equal(10, r.NewlyAckedCount);
    }

    [Fact]
    public void PacketThreshold_DeclaresPacketsThreeBelowLargestAcked()
    {
        var t = SendRange(0, 4, timeStepUs: 0);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((3, 3)), ref sink);
        LossDetectionResult loss = t.DetectLostPackets(0, lossDelayUs: 100_000, 0, false, 0, ref sink);
        Assert.Equal(new long[] { 0 }, sink.Lost);
        Assert.Equal(1, loss.LostCount);
        Assert.Equal(1200, loss.LostInFlightBytes);
        Assert.True(loss.HasCongestionEvent);
        // 1 and 2 wait for the time threshold.
        Assert.Equal(100_000, t.LossTimeUs);

        t.OnAckReceived(Ranges((4, 4), (3, 3)), ref sink);
        t.DetectLostPackets(0, 100_000, 0, false, 0, ref sink);
        Assert.Equal(new long[] { 0, 1 }, sink.Lost);
        Assert.Equal(100_000, t.LossTimeUs);
    }

    [Fact]
    public void TimeThreshold_DeclaresOldPackets_AndArmsLossTimeForTheRest()
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData);
        t.OnPacketSent(0, 0, 1200, true, true, 0);
        t.OnPacketSent(1, 10_000, 1200, true, true, 0);
        t.OnPacketSent(2, 12_000, 1200, true, true, 0);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((2, 2)), ref sink);

        // now = 18 ms, loss delay 9 ms: 0 (sent at 0 <= 9 ms) is lost, 1 (10 ms) is not yet.
        t.DetectLostPackets(18_000, 9_000, 0, false, 0, ref sink);
        Assert.Equal(new long[] { 0 }, sink.Lost);
        Assert.Equal(19_000, t.LossTimeUs);

        t.DetectLostPackets(19_000, 9_000, 0, false, 0, ref sink);
        Assert.Equal(new long[] { 0, 1 }, sink.Lost);
        Assert.Equal(RecoveryConstants.NoTime, t.LossTimeUs);
        Assert.Equal(0, t.OutstandingCount);
    }

    [Fact]
    public void PacketsAboveLargestAcked_AreNeverLost()
    {
        var t = SendRange(0, 9);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((2, 2)), ref sink);
        t.DetectLostPackets(long.MaxValue / 2, 1, 0, false, 0, ref sink);
        Assert.Equal(new long[] { 0, 1 }, sink.Lost);
        Assert.Equal(7, t.OutstandingCount);
    }

    // RFC 9002 §7.6.3 example: duration 2 * 3 = 6; packets 1..9 at t=0,1,2,3,4,5,6,8,12 (seconds); #1 acked at 1.2,
    // #9 acked at 12.2; packets 2..8 are lost; period 8 - 1 = 7 > 6, nothing acked between: persistent congestion.
    [Theory]
    [InlineData(6_000_000, true)]
    [InlineData(7_000_000, false)] // the period must exceed the duration
    public void PersistentCongestion_Rfc9002Example(long durationUs, bool expected)
    {
        var t = BuildRfcExample(out var sink);
        LossDetectionResult loss = t.DetectLostPackets(12_200_000, 1_000_000, durationUs, hasRttSample: true, firstRttSampleUs: -1, ref sink);
        Assert.Equal(new long[] { 2, 3, 4, 5, 6, 7, 8 }, sink.Lost);
        Assert.Equal(7, loss.LostCount);
        Assert.Equal(8_000_000, loss.LargestLostInFlightTimeSentUs);
        Assert.Equal(expected, loss.PersistentCongestion);
    }

    [Fact]
    public void PersistentCongestion_NotWhenAPacketBetweenWasAcked()
    {
        var t = BuildRfcExample(out var sink, ackFive: true);
        LossDetectionResult loss = t.DetectLostPackets(12_200_000, 1_000_000, 6_000_000, true, -1, ref sink);
        Assert.Equal(new long[] { 2, 3, 4, 6, 7, 8 }, sink.Lost);
        Assert.False(loss.PersistentCongestion); // runs 2..4 (2 s) and 6..8 (3 s) are both short
    }

    [Fact]
    public void PersistentCongestion_NotWithoutPriorRttSample()
    {
        var t = BuildRfcExample(out var sink);
        Assert.False(t.DetectLostPackets(12_200_000, 1_000_000, 6_000_000, false, 0, ref sink).PersistentCongestion);

        // A first sample taken at t = 1.2 s: packet 2 (t = 1 s) does not count; 3 (2 s) .. 8 (8 s) is 6 s, not > 6.
        var t2 = BuildRfcExample(out var sink2);
        Assert.False(t2.DetectLostPackets(12_200_000, 1_000_000, 6_000_000, true, 1_200_000, ref sink2).PersistentCongestion);
    }

    [Fact]
    public void PersistentCongestion_RequiresAckElicitingPackets()
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData);
        t.OnPacketSent(0, 0, 1200, ackEliciting: true, inFlight: true, 0);
        t.OnPacketSent(1, 1_000_000, 1200, ackEliciting: false, inFlight: true, 0);
        t.OnPacketSent(2, 9_000_000, 1200, ackEliciting: false, inFlight: true, 0);
        t.OnPacketSent(3, 10_000_000, 1200, ackEliciting: true, inFlight: true, 0);
        t.OnPacketSent(4, 10_000_000, 1200, ackEliciting: true, inFlight: true, 0);
        t.OnPacketSent(5, 10_000_000, 1200, ackEliciting: true, inFlight: true, 0);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((5, 5)), ref sink);
        LossDetectionResult loss = t.DetectLostPackets(10_000_000, 10_000_000, 6_000_000, true, -1, ref sink);
        Assert.Equal(new long[] { 0, 1, 2 }, sink.Lost);
        Assert.False(loss.PersistentCongestion); // only one ack-eliciting packet (0) lost
    }

    [Fact]
    public void DiscardAll_ReturnsInFlightBytes_AndClears()
    {
        var t = SendRange(0, 4, size: 1000);
        t.OnPacketSent(5, 0, 50, ackEliciting: false, inFlight: false, 0);
        Assert.Equal(5000, t.DiscardAll());
        Assert.Equal(0, t.BytesInFlight);
        Assert.Equal(0, t.OutstandingCount);
        Assert.Equal(0, t.AckElicitingInFlight);
        t.OnPacketSent(6, 0, 1000, true, true, 0); // numbering continues
        Assert.Equal(1000, t.BytesInFlight);
    }

    [Fact]
    public void SendingNonIncreasingPacketNumber_Throws()
    {
        var t = SendRange(0, 3);
        Assert.Throws<InvalidOperationException>(() => t.OnPacketSent(3, 0, 1, true, true, 0));
    }

    [Fact]
    public void SteadyState_DoesNotGrowTheRing()
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData, 64);
        var sink = RecordingSink.Create();
        var range = new AckRange[1];
        for (long pn = 0; pn < 100_000; pn++)
        {
            t.OnPacketSent(pn, pn, 1200, true, true, 0);
            if (pn >= 20)
            {
                range[0] = new AckRange(pn - 20, pn - 20);
                t.OnAckReceived(range, ref sink);
            }
        }

        Assert.Equal(64, t.Capacity);
        Assert.Equal(20, t.OutstandingCount);
    }

    [Fact]
    public void VisitOutstanding_WalksOldestFirst()
    {
        var t = SendRange(0, 5);
        var sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((4, 4), (0, 1)), ref sink);
        var visitor = new CollectingVisitor { Seen = new List<long>(), Limit = 2 };
        t.VisitOutstanding(ref visitor);
        Assert.Equal(new long[] { 2, 3 }, visitor.Seen);
    }

    private struct CollectingVisitor : ISentPacketVisitor<int>
    {
        public List<long> Seen;
        public int Limit;

        public bool Visit(in SentPacket<int> packet)
        {
            Seen.Add(packet.PacketNumber);
            return Seen.Count < Limit;
        }
    }

    // Randomized: the tracker agrees with a naive model (a dictionary of outstanding packets) on what each ACK newly
    // acknowledges, on errors for never-sent/skipped numbers, and on bytes in flight.
    [Fact]
    public void Randomized_MatchesNaiveModel()
    {
        var rng = new Random(9002);
        for (int round = 0; round < 200; round++)
        {
            var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData, 8);
            var outstanding = new Dictionary<long, int>();
            var sent = new HashSet<long>();
            long next = 0;
            var sink = RecordingSink.Create();
            for (int step = 0; step < 300; step++)
            {
                if (rng.Next(3) != 0)
                {
                    if (rng.Next(10) == 0)
                    {
                        next += 1 + rng.Next(3); // skip
                    }

                    int size = 1 + rng.Next(1500);
                    t.OnPacketSent(next, step, size, true, true, 0);
                    outstanding[next] = size;
                    sent.Add(next);
                    next++;
                    continue;
                }

                if (next == 0)
                {
                    continue;
                }

                // Random descending disjoint ranges below next (possibly covering skipped numbers).
                var ranges = new List<AckRange>();
                long hi = rng.Next(8) == 0 ? next : next - 1 - rng.Next((int)Math.Min(next, 5));
                // Stay within the last 14 numbers: the tracker remembers the last 16 skipped numbers (older skips
                // are only detected while inside the ring window).
                long floor = Math.Max(0, next - 14);
                while (hi >= floor && ranges.Count < 6)
                {
                    long lo = Math.Max(floor, hi - rng.Next(6));
                    ranges.Add(new AckRange(lo, hi));
                    hi = lo - 2 - rng.Next(6);
                }

                bool coversUnsent = false;
                foreach (AckRange r in ranges)
                {
                    for (long pn = r.Smallest; pn <= r.Largest; pn++)
                    {
                        coversUnsent |= !sent.Contains(pn);
                    }
                }

                sink.Acked.Clear();
                AckProcessingResult result = t.OnAckReceived(ranges.ToArray(), ref sink);
                if (coversUnsent)
                {
                    Assert.Equal(TransportErrorCode.ProtocolViolation, result.Error);
                    Assert.Empty(sink.Acked);
                    continue;
                }

                Assert.False(result.IsError);
                var expected = new List<long>();
                foreach (long pn in outstanding.Keys)
                {
                    foreach (AckRange r in ranges)
                    {
                        if (r.Contains(pn))
                        {
                            expected.Add(pn);
                        }
                    }
                }

                expected.Sort();
                Assert.Equal(expected, sink.Acked);
                foreach (long pn in expected)
                {
                    outstanding.Remove(pn);
                }

                long bytes = 0;
                foreach (int s in outstanding.Values)
                {
                    bytes += s;
                }

                Assert.Equal(bytes, t.BytesInFlight);
                Assert.Equal(outstanding.Count, t.OutstandingCount);
            }
        }
    }

    private static SentPacketTracker<int> BuildRfcExample(out RecordingSink sink, bool ackFive = false)
    {
        var t = new SentPacketTracker<int>(PacketNumberSpace.ApplicationData);
        long[] times = [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000, 6_000_000, 8_000_000, 12_000_000];
        for (int i = 0; i < times.Length; i++)
        {
            t.OnPacketSent(i + 1, times[i], 1200, true, true, 0);
        }

        sink = RecordingSink.Create();
        t.OnAckReceived(Ranges((1, 1)), ref sink);
        if (ackFive)
        {
            t.OnAckReceived(Ranges((5, 5)), ref sink);
        }

        t.OnAckReceived(Ranges((9, 9)), ref sink);
        return t;
    }
}
