using System.Buffers.Binary;
using QuicManaged.Tools.LinkEmulator;

namespace System.Net.Quic.Managed.Tests.LinkEmulator;

public class LinkDirectionTests
{
    private static byte[] Packet(int sequence, int length = 100)
    {
        byte[] p = new byte[length];
        BinaryPrimitives.WriteInt32BigEndian(p, sequence);
        return p;
    }

    /// <summary>Drains everything due up to <paramref name="untilUs"/>, stepping 1 µs at a time through release times.</summary>
    private static List<(int Sequence, long ReleaseUs)> DrainAll(LinkDirection d, long untilUs = long.MaxValue)
    {
        var released = new List<(int, long)>();
        byte[] buffer = new byte[65536];
        while (d.QueuedPackets > 0 && d.NextReleaseUs <= untilUs)
        {
            long t = d.NextReleaseUs;
            Assert.False(d.TryRelease(t - 1, buffer, out _));
            Assert.True(d.TryRelease(t, buffer, out int length));
            Assert.True(length >= 4);
            released.Add((BinaryPrimitives.ReadInt32BigEndian(buffer), t));
        }

        return released;
    }

    [Fact]
    public void FixedDelayReleasesExactlyAfterDelayAndNotBefore()
    {
        var d = new LinkDirection(new ImpairmentOptions { DelayUs = 10_000 }, new Random(1));
        long[] arrivals = [0, 1, 500, 12_345, 1_000_000];
        for (int i = 0; i < arrivals.Length; i++)
        {
            Assert.Equal(PacketFate.Scheduled, d.Submit(Packet(i), arrivals[i]));
        }

        List<(int Sequence, long ReleaseUs)> released = DrainAll(d);
        Assert.Equal(arrivals.Length, released.Count);
        for (int i = 0; i < arrivals.Length; i++)
        {
            Assert.Equal(i, released[i].Sequence);
            Assert.Equal(arrivals[i] + 10_000, released[i].ReleaseUs);
        }

        Assert.Equal(arrivals.Length, d.Counters.Delayed);
        Assert.Equal(10_000.0, d.Counters.MeanDelayUs);
        Assert.Equal(arrivals.Length, d.Counters.PacketsForwarded);
        Assert.Equal(arrivals.Length * 100, d.Counters.BytesForwarded);
    }

    [Fact]
    public void ZeroDelayPacketIsDueImmediatelyAndNotCountedAsDelayed()
    {
        var d = new LinkDirection(new ImpairmentOptions(), new Random(1));
        d.Submit(Packet(7), 42);
        Assert.Equal(42, d.NextReleaseUs);
        Assert.True(d.TryRelease(42, new byte[200], out int length));
        Assert.Equal(100, length);
        Assert.Equal(0, d.Counters.Delayed);
        Assert.Equal(long.MaxValue, d.NextReleaseUs);
    }

    [Fact]
    public void BernoulliLossRateIsWithinFiveSigma()
    {
        const int n = 20_000;
        const double p = 0.05;
        var d = new LinkDirection(new ImpairmentOptions { LossProbability = p }, new Random(7));
        for (int i = 0; i < n; i++)
        {
            PacketFate fate = d.Submit(Packet(i), i);
            Assert.True(fate is PacketFate.Scheduled or PacketFate.DroppedLoss);
        }

        double sigma = Math.Sqrt(n * p * (1 - p));
        Assert.InRange(d.Counters.DroppedLoss, (long)(n * p - 5 * sigma), (long)(n * p + 5 * sigma));
        DrainAll(d);
        Assert.Equal(n, d.Counters.PacketsIn);
        Assert.Equal(n, d.Counters.PacketsForwarded + d.Counters.DroppedTotal);
        Assert.Equal(0, d.Counters.DroppedBurstLoss);
    }

    [Fact]
    public void GilbertElliottProducesBurstsOfTheExpectedMeanLength()
    {
        // Good->Bad 1 %, Bad->Good 25 %, lose everything in Bad: stationary loss p/(p+r) = 3.85 %, mean burst 1/r = 4.
        const int n = 200_000;
        var d = new LinkDirection(new ImpairmentOptions { BurstGoodToBad = 0.01, BurstBadToGood = 0.25 }, new Random(3));
        int bursts = 0, run = 0;
        long lost = 0;
        for (int i = 0; i < n; i++)
        {
            PacketFate fate = d.Submit(Packet(i), i);
            if (fate == PacketFate.DroppedBurstLoss)
            {
                lost++;
                if (run++ == 0)
                {
                    bursts++;
                }
            }
            else
            {
                Assert.Equal(PacketFate.Scheduled, fate);
                run = 0;
            }
        }

        Assert.Equal(lost, d.Counters.DroppedBurstLoss);
        Assert.InRange(lost / (double)n, 0.033, 0.044);
        Assert.InRange(lost / (double)bursts, 3.5, 4.5);
    }

    [Fact]
    public void RateLimitSerializesBackToBackPacketsAtTheConfiguredRate()
    {
        // 10 Mbit/s: a 1250-byte packet takes exactly 1000 µs on the wire; 3 ms propagation delay on top.
        var d = new LinkDirection(new ImpairmentOptions { RateBitsPerSecond = 10_000_000, QueueLimitBytes = 1 << 30, DelayUs = 3000 }, new Random(1));
        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(PacketFate.Scheduled, d.Submit(Packet(i, 1250), 0));
        }

        List<(int Sequence, long ReleaseUs)> released = DrainAll(d);
        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(i, released[i].Sequence);
            Assert.Equal((i + 1) * 1000L + 3000, released[i].ReleaseUs);
        }

        // An idle link does not bank credit: a packet arriving long after the burst still takes its own 1000 µs.
        d.Submit(Packet(100, 1250), 1_000_000);
        Assert.Equal(1_000_000 + 1000 + 3000, d.NextReleaseUs);
    }

    [Fact]
    public void RateLimitThroughputMatchesRateForOddSizes()
    {
        // 7 Mbit/s with 1337-byte packets offered faster than the rate: delivered bytes over time must match the rate.
        var d = new LinkDirection(new ImpairmentOptions { RateBitsPerSecond = 7_000_000, QueueLimitBytes = 1 << 30 }, new Random(1));
        for (int i = 0; i < 5000; i++)
        {
            d.Submit(Packet(i, 1337), i * 100L);
        }

        List<(int Sequence, long ReleaseUs)> released = DrainAll(d);
        double seconds = released[^1].ReleaseUs / 1e6;
        double bitsPerSecond = 5000 * 1337 * 8 / seconds;
        Assert.InRange(bitsPerSecond, 7_000_000 * 0.999, 7_000_000 * 1.001);
    }

    [Fact]
    public void QueueLimitDropsAtTheTailAndAdmitsAgainAsTheQueueDrains()
    {
        // 10 Mbit/s, 1250-byte packets, queue of 10 packets.
        var d = new LinkDirection(new ImpairmentOptions { RateBitsPerSecond = 10_000_000, QueueLimitBytes = 12_500 }, new Random(1));
        var fates = new List<PacketFate>();
        for (int i = 0; i < 30; i++)
        {
            fates.Add(d.Submit(Packet(i, 1250), 0));
        }

        for (int i = 0; i < 30; i++)
        {
            Assert.Equal(i < 10 ? PacketFate.Scheduled : PacketFate.DroppedQueueFull, fates[i]);
        }

        Assert.Equal(20, d.Counters.DroppedQueueFull);
        Assert.Equal(12_500, d.BacklogBytes(0));
        Assert.Equal(12_500, d.Counters.MaxQueueBytes);

        // After 5 ms, 5 packets have left the bottleneck: exactly 5 more fit.
        Assert.Equal(6250, d.BacklogBytes(5000));
        int admitted = 0;
        for (int i = 30; i < 40; i++)
        {
            if (d.Submit(Packet(i, 1250), 5000) == PacketFate.Scheduled)
            {
                admitted++;
            }
        }

        Assert.Equal(5, admitted);
        Assert.Equal(25, d.Counters.DroppedQueueFull);
        List<(int Sequence, long ReleaseUs)> released = DrainAll(d);
        Assert.Equal(15, released.Count);
        Assert.Equal(15_000, released[^1].ReleaseUs);
    }

    [Fact]
    public void ReorderHoldsPacketsSoThatLaterOnesOvertakeThem()
    {
        var d = new LinkDirection(new ImpairmentOptions { DelayUs = 1000, ReorderProbability = 0.1, ReorderGapUs = 5000 }, new Random(11));
        const int n = 2000;
        for (int i = 0; i < n; i++)
        {
            d.Submit(Packet(i), i * 100L);
        }

        List<(int Sequence, long ReleaseUs)> released = DrainAll(d);
        Assert.Equal(n, released.Count);
        Assert.InRange(d.Counters.Reordered, 120, 280);

        // Packets that arrive after a held packet but leave before it.
        var position = new int[n];
        for (int k = 0; k < n; k++)
        {
            position[released[k].Sequence] = k;
        }

        int held = 0;
        int lastInOrder = -1;
        for (int i = 0; i < n; i++)
        {
            long releaseUs = released[position[i]].ReleaseUs;
            if (releaseUs == i * 100L + 6000)
            {
                held++;
                // 5 ms gap at one packet per 100 µs: the next packets overtake it (unless they are held too).
                if (i + 1 < n && released[position[i + 1]].ReleaseUs != (i + 1) * 100L + 6000)
                {
                    Assert.True(position[i + 1] < position[i]);
                }
            }
            else
            {
                Assert.Equal(i * 100L + 1000, releaseUs);
                Assert.True(position[i] > lastInOrder);
                lastInOrder = position[i];
            }
        }

        Assert.Equal(d.Counters.Reordered, held);
    }

    [Fact]
    public void JitterVariesDelayButNeverReorders()
    {
        // Dense traffic (1 ms apart, jitter +-4 ms): order is kept by holding a packet behind its predecessor,
        // so delays only ever grow past the lower bound.
        var dense = new LinkDirection(new ImpairmentOptions { DelayUs = 10_000, JitterUs = 4000 }, new Random(5));
        const int n = 5000;
        for (int i = 0; i < n; i++)
        {
            dense.Submit(Packet(i), i * 1000L);
        }

        List<(int Sequence, long ReleaseUs)> released = DrainAll(dense);
        for (int i = 0; i < n; i++)
        {
            Assert.Equal(i, released[i].Sequence);
            Assert.InRange(released[i].ReleaseUs - i * 1000L, 6000, 14_000);
        }

        // Sparse traffic (20 ms apart): the order constraint never binds, so delays spread uniformly around 10 ms.
        var sparse = new LinkDirection(new ImpairmentOptions { DelayUs = 10_000, JitterUs = 4000 }, new Random(5));
        var distinctDelays = new HashSet<long>();
        for (int i = 0; i < n; i++)
        {
            sparse.Submit(Packet(i), i * 20_000L);
        }

        foreach ((int sequence, long releaseUs) in DrainAll(sparse))
        {
            long delay = releaseUs - sequence * 20_000L;
            Assert.InRange(delay, 6000, 14_000);
            distinctDelays.Add(delay);
        }

        Assert.True(distinctDelays.Count > 3000);
        // Uniform on [6000, 14000]: standard deviation of the mean over 5000 samples is ~33 µs.
        Assert.InRange(sparse.Counters.MeanDelayUs, 9850, 10_150);
    }

    [Fact]
    public void SameSeedGivesTheSameScheduleAndAnotherSeedDoesNot()
    {
        static List<(PacketFate, long)> Schedule(int seed)
        {
            var random = new Random(seed);
            var options = new ImpairmentOptions
            {
                DelayUs = 2000, JitterUs = 500, LossProbability = 0.03, ReorderProbability = 0.05, ReorderGapUs = 700,
                RateBitsPerSecond = 50_000_000, QueueLimitBytes = 20_000,
            };
            // Two directions share one Random, as in the emulator.
            var ab = new LinkDirection(options, random);
            var ba = new LinkDirection(options.Clone(), random);
            var result = new List<(PacketFate, long)>();
            for (int i = 0; i < 3000; i++)
            {
                LinkDirection d = i % 3 == 0 ? ba : ab;
                PacketFate fate = d.Submit(Packet(i, 200 + (i * 37 % 1200)), i * 50L);
                result.Add((fate, fate == PacketFate.Scheduled ? d.NextReleaseUs : -1));
            }

            foreach ((int sequence, long releaseUs) in DrainAll(ab))
            {
                result.Add((PacketFate.Scheduled, releaseUs * 10_000 + sequence));
            }

            return result;
        }

        List<(PacketFate, long)> first = Schedule(42);
        Assert.Equal(first, Schedule(42));
        Assert.NotEqual(first, Schedule(43));
        Assert.Contains(first, x => x.Item1 == PacketFate.DroppedLoss);
        Assert.Contains(first, x => x.Item1 == PacketFate.DroppedQueueFull);
    }

    [Fact]
    public void LatenessCountsHowLongAfterItsReleaseTimeAPacketWasTakenOut()
    {
        var d = new LinkDirection(new ImpairmentOptions { DelayUs = 1000 }, new Random(1));
        d.Submit(Packet(1), 0);
        d.Submit(Packet(2), 0);
        byte[] buffer = new byte[1500];
        Assert.True(d.TryRelease(1000, buffer, out _));
        Assert.True(d.TryRelease(1750, buffer, out _));
        Assert.Equal(750, d.Counters.LatenessSumUs);
        Assert.Equal(750, d.Counters.MaxLatenessUs);
        Assert.Equal(375.0, d.Counters.MeanLatenessUs);
        // Lateness is not part of the scheduled (added) delay.
        Assert.Equal(1000.0, d.Counters.MeanDelayUs);
    }

    [Fact]
    public void EmptyPacketIsRejectedWithoutTouchingCounters()
    {
        var d = new LinkDirection(new ImpairmentOptions(), new Random(1));
        Assert.Equal(PacketFate.DroppedEmpty, d.Submit(ReadOnlySpan<byte>.Empty, 0));
        Assert.Equal(0, d.Counters.PacketsIn);
        Assert.Equal(0, d.QueuedPackets);
    }

    [Fact]
    public void WriteFailureMovesThePacketFromForwardedToDropped()
    {
        var d = new LinkDirection(new ImpairmentOptions(), new Random(1));
        d.Submit(Packet(1, 300), 0);
        Assert.True(d.TryRelease(0, new byte[1500], out int length));
        d.RecordWriteFailure(length);
        Assert.Equal(0, d.Counters.PacketsForwarded);
        Assert.Equal(0, d.Counters.BytesForwarded);
        Assert.Equal(1, d.Counters.DroppedWriteError);
        Assert.Equal(1, d.Counters.DroppedTotal);
    }
}
