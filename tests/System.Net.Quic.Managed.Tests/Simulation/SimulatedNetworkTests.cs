using System.Buffers.Binary;
using System.Numerics;

namespace System.Net.Quic.Managed.Tests.Simulation;

public class SimulatedNetworkTests
{
    private static readonly SimAddress SenderAddress = new(1, 50000);
    private static readonly SimAddress ReceiverAddress = new(2, 443);

    [Fact]
    public void Delay_IsExact()
    {
        var (net, sender, receiver, link) = Pair(1, new LinkConditions { DelayUs = 25_000 }, count: 10, size: 100, intervalUs: 1_000);

        Assert.Equal(SimRunResult.Idle, net.RunFor(1_000_000));

        Assert.Equal(10, receiver.Arrivals.Count);
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal(i, receiver.Arrivals[i].Sequence);
            Assert.Equal(i * 1_000L + 25_000, receiver.Arrivals[i].TimeUs);
            Assert.Equal(SenderAddress, receiver.Arrivals[i].From);
        }

        Assert.Equal(10, link.AToB.Statistics.DeliveredDatagrams);
        Assert.Equal(1_000, link.AToB.Statistics.DeliveredBytes);
        Assert.Equal(0, link.AToB.Statistics.DroppedDatagrams);
        Assert.Equal(1_000_000, net.NowUs);
    }

    [Fact]
    public void Delay_IsPerDirection()
    {
        var (net, sender, receiver, _) = Pair(
            1, new LinkConditions { DelayUs = 10_000 }, count: 3, size: 64, intervalUs: 5_000, bToA: new LinkConditions { DelayUs = 30_000 });
        receiver.Echo = true;

        net.RunFor(1_000_000);

        Assert.Equal(3, sender.Received.Arrivals.Count);
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(sender.SendTimesUs[i] + 40_000, sender.Received.Arrivals[i].TimeUs);
            Assert.Equal(ReceiverAddress, sender.Received.Arrivals[i].From);
        }
    }

    [Fact]
    public void Jitter_StaysWithinBound_AndKeepsFifoOrderByDefault()
    {
        var conditions = new LinkConditions { DelayUs = 10_000, JitterUs = 5_000 };
        var (net, sender, receiver, _) = Pair(2, conditions, count: 1_000, size: 100, intervalUs: 100);

        net.RunFor(10_000_000);

        Assert.Equal(1_000, receiver.Arrivals.Count);
        var distinctDelays = new HashSet<long>();
        for (int i = 0; i < receiver.Arrivals.Count; i++)
        {
            DatagramArrival arrival = receiver.Arrivals[i];
            Assert.Equal(i, arrival.Sequence);
            long oneWay = arrival.TimeUs - sender.SendTimesUs[i];
            Assert.InRange(oneWay, 10_000, 15_000);
            distinctDelays.Add(oneWay);
        }

        Assert.True(distinctDelays.Count > 100, "jitter must vary the delay");
    }

    [Theory]
    [InlineData(10_000_000L, 1200)] // 960 µs per datagram, exact
    [InlineData(3_000_000L, 1250)]  // 3333.3 µs: fractional, must not accumulate rounding
    [InlineData(1_000_000_000L, 1350)] // 10.8 µs: rounding each datagram up would lose 1.8 %
    public void Bandwidth_LimitsThroughputToLinkRate(long bitsPerSecond, int size)
    {
        const int Count = 2_000;
        var conditions = new LinkConditions { DelayUs = 5_000, BandwidthBitsPerSecond = bitsPerSecond };
        var (net, _, receiver, link) = Pair(3, conditions, count: Count, size: size, intervalUs: 0);

        net.RunFor(60_000_000);

        Assert.Equal(Count, receiver.Arrivals.Count);
        long spanUs = receiver.Arrivals[^1].TimeUs - receiver.Arrivals[0].TimeUs;
        double throughput = (Count - 1) * size * 8.0 * 1_000_000 / spanUs;
        Assert.InRange(throughput, bitsPerSecond * 0.99, bitsPerSecond * 1.01);

        // The first datagram needs its own serialization time plus the propagation delay.
        long firstSerializationUs = ((long)size * 8 * 1_000_000 + bitsPerSecond - 1) / bitsPerSecond;
        Assert.Equal(5_000 + firstSerializationUs, receiver.Arrivals[0].TimeUs);
        Assert.Equal(0, link.AToB.Statistics.DroppedDatagrams);
    }

    [Fact]
    public void QueueLimit_DropsTail()
    {
        // 1000-byte datagrams on 10 Mbit/s take 800 µs each; 10,000 bytes of buffer hold 10 of them.
        var conditions = new LinkConditions { DelayUs = 1_000, BandwidthBitsPerSecond = 10_000_000, QueueLimitBytes = 10_000 };
        var (net, _, receiver, link) = Pair(4, conditions, count: 100, size: 1_000, intervalUs: 0);

        net.RunFor(1_000_000);

        Assert.Equal(10, receiver.Arrivals.Count);
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal(i, receiver.Arrivals[i].Sequence);
            Assert.Equal(1_000 + (i + 1) * 800L, receiver.Arrivals[i].TimeUs);
        }

        Assert.Equal(90, link.AToB.Statistics.Dropped(DropCause.QueueOverflow));
        Assert.Equal(90, link.AToB.Statistics.DroppedDatagrams);
    }

    [Fact]
    public void QueueLimit_DoesNotDropWhenPacedBelowLinkRate()
    {
        var conditions = new LinkConditions { BandwidthBitsPerSecond = 10_000_000, QueueLimitBytes = 1_500 };
        var (net, _, receiver, link) = Pair(4, conditions, count: 100, size: 1_000, intervalUs: 800);

        net.RunFor(1_000_000);

        Assert.Equal(100, receiver.Arrivals.Count);
        Assert.Equal(0, link.AToB.Statistics.DroppedDatagrams);
    }

    [Fact]
    public void RandomLoss_RateIsWithinStatisticalBound()
    {
        const int Count = 10_000;
        var (net, _, receiver, link) = Pair(5, new LinkConditions { DelayUs = 1_000, LossProbability = 0.1 }, Count, 64, intervalUs: 10);

        net.RunFor(10_000_000);

        LinkStatistics stats = link.AToB.Statistics;
        AssertBinomial(stats.Dropped(DropCause.RandomLoss), Count, 0.1);
        Assert.Equal(Count, stats.SentDatagrams);
        Assert.Equal(Count, stats.DeliveredDatagrams + stats.DroppedDatagrams);
        Assert.Equal(stats.DeliveredDatagrams, receiver.Arrivals.Count);
    }

    [Fact]
    public void BurstLoss_GilbertElliott_ProducesBurstsOfTheConfiguredMeanLength()
    {
        const int Count = 10_000;
        var conditions = new LinkConditions { BurstLoss = new GilbertElliottLoss { GoodToBad = 0.01, BadToGood = 0.25 } };
        var (net, _, receiver, link) = Pair(6, conditions, Count, 64, intervalUs: 10);

        net.RunFor(10_000_000);

        // Long-run loss = 0.01 / 0.26 = 3.85 %; mean burst = 1 / 0.25 = 4.
        long lost = link.AToB.Statistics.Dropped(DropCause.BurstLoss);
        Assert.InRange(lost, 250, 550);
        Assert.Equal(Count - lost, receiver.Arrivals.Count);

        int bursts = 0;
        long previous = -1;
        foreach (DatagramArrival arrival in receiver.Arrivals)
        {
            if (arrival.Sequence != previous + 1)
            {
                bursts++;
            }

            previous = arrival.Sequence;
        }

        double meanBurst = (double)lost / bursts;
        Assert.InRange(meanBurst, 3.0, 5.0);
    }

    [Fact]
    public void DropNext_DropsExactlyTheNextDatagrams()
    {
        var (net, sender, receiver, link) = Pair(7, new LinkConditions { DelayUs = 100 }, count: 10, size: 64, intervalUs: 1_000);

        net.RunFor(2_500); // datagrams 0, 1, 2 sent
        link.AToB.DropNext(3);
        net.RunFor(1_000_000);

        long[] sequences = Sequences(receiver);
        Assert.Equal(new long[] { 0, 1, 2, 6, 7, 8, 9 }, sequences);
        Assert.Equal(3, link.AToB.Statistics.Dropped(DropCause.BurstLoss));
    }

    [Fact]
    public void Reordering_HappensAtTheConfiguredRate()
    {
        const int Count = 10_000;
        var conditions = new LinkConditions { DelayUs = 1_000, ReorderProbability = 0.05, ReorderExtraDelayUs = 5_000 };
        var (net, _, receiver, link) = Pair(8, conditions, Count, 64, intervalUs: 100);

        net.RunFor(10_000_000);

        LinkStatistics stats = link.AToB.Statistics;
        AssertBinomial(stats.Reordered, Count, 0.05);
        Assert.Equal(Count, receiver.Arrivals.Count);

        long observedOutOfOrder = 0;
        long highest = -1;
        foreach (DatagramArrival arrival in receiver.Arrivals)
        {
            if (arrival.Sequence < highest)
            {
                observedOutOfOrder++;
            }
            else
            {
                highest = arrival.Sequence;
            }
        }

        Assert.Equal(observedOutOfOrder, stats.DeliveredOutOfOrder);

        // Each held-back datagram is overtaken by the ~50 sent in the next 5 ms, except near the very end.
        Assert.InRange(observedOutOfOrder, stats.Reordered - 5, stats.Reordered);
    }

    [Fact]
    public void Duplication_HappensAtTheConfiguredRate()
    {
        const int Count = 10_000;
        var conditions = new LinkConditions { DelayUs = 1_000, DuplicationProbability = 0.02, DuplicateExtraDelayUs = 10 };
        var (net, _, receiver, link) = Pair(9, conditions, Count, 64, intervalUs: 100);

        net.RunFor(10_000_000);

        LinkStatistics stats = link.AToB.Statistics;
        AssertBinomial(stats.Duplicated, Count, 0.02);
        Assert.Equal(Count + stats.Duplicated, receiver.Arrivals.Count);

        var seen = new Dictionary<long, int>();
        foreach (DatagramArrival arrival in receiver.Arrivals)
        {
            seen[arrival.Sequence] = seen.GetValueOrDefault(arrival.Sequence) + 1;
        }

        Assert.Equal(Count, seen.Count);
        Assert.Equal(stats.Duplicated, seen.Values.Count(v => v == 2));
        Assert.DoesNotContain(seen.Values, v => v > 2);
    }

    [Fact]
    public void Corruption_FlipsExactlyOneBit()
    {
        const int Count = 10_000;
        var conditions = new LinkConditions { DelayUs = 1_000, CorruptionProbability = 0.05 };
        var (net, sender, receiver, link) = Pair(10, conditions, Count, 100, intervalUs: 100);
        sender.NumberDatagrams = false;

        net.RunFor(10_000_000);

        Assert.Equal(Count, receiver.Arrivals.Count);
        int corrupted = 0;
        foreach (DatagramArrival arrival in receiver.Arrivals)
        {
            int flippedBits = 0;
            foreach (byte b in arrival.Data)
            {
                flippedBits += BitOperations.PopCount((uint)(b ^ sender.Fill));
            }

            Assert.InRange(flippedBits, 0, 1);
            corrupted += flippedBits;
        }

        Assert.Equal(link.AToB.Statistics.Corrupted, corrupted);
        AssertBinomial(corrupted, Count, 0.05);
    }

    [Fact]
    public void Interceptor_CanDropEditResizeDelayAndReplay()
    {
        var (net, sender, receiver, link) = Pair(11, new LinkConditions { DelayUs = 10_000 }, count: 20, size: 100, intervalUs: 1_000);
        var seenIndexes = new List<long>();
        net.Interceptor = datagram =>
        {
            Assert.Same(link.AToB, datagram.Direction);
            Assert.Equal(SenderAddress, datagram.From);
            Assert.Equal(ReceiverAddress, datagram.To);
            Assert.Equal(datagram.Index, BinaryPrimitives.ReadInt64BigEndian(datagram.Data));
            seenIndexes.Add(datagram.Index);
            switch (datagram.Index)
            {
                case 3:
                    return InterceptAction.Drop;
                case 5:
                    datagram.Data[10] = 0xFF;
                    return InterceptAction.Pass;
                case 7:
                    return InterceptAction.Replay(afterUs: 1_500);
                case 9:
                    return InterceptAction.Delay(50_000);
                case 11:
                    datagram.Resize(20);
                    return InterceptAction.Pass;
                case 12:
                    datagram.Resize(300);
                    datagram.Data[299] = 0x77;
                    return InterceptAction.Pass;
                default:
                    return InterceptAction.Pass;
            }
        };

        net.RunFor(1_000_000);

        Assert.Equal(Enumerable.Range(0, 20).Select(i => (long)i), seenIndexes);
        Assert.DoesNotContain(receiver.Arrivals, a => a.Sequence == 3);

        DatagramArrival edited = Assert.Single(receiver.Arrivals, a => a.Sequence == 5);
        Assert.Equal(0xFF, edited.Data[10]);
        Assert.Equal(sender.Fill, edited.Data[11]);

        DatagramArrival[] replayed = receiver.Arrivals.Where(a => a.Sequence == 7).ToArray();
        Assert.Equal(2, replayed.Length);
        Assert.Equal(7_000 + 10_000, replayed[0].TimeUs);
        Assert.Equal(7_000 + 10_000 + 1_500, replayed[1].TimeUs);
        Assert.Equal(replayed[0].Data, replayed[1].Data);

        DatagramArrival delayed = Assert.Single(receiver.Arrivals, a => a.Sequence == 9);
        Assert.Equal(9_000 + 10_000 + 50_000, delayed.TimeUs);
        Assert.True(receiver.Arrivals.IndexOf(delayed) > receiver.Arrivals.FindIndex(a => a.Sequence == 19), "delayed datagram arrives last");

        Assert.Equal(20, Assert.Single(receiver.Arrivals, a => a.Sequence == 11).Data.Length);
        DatagramArrival grown = Assert.Single(receiver.Arrivals, a => a.Sequence == 12);
        Assert.Equal(300, grown.Data.Length);
        Assert.Equal(0, grown.Data[150]);
        Assert.Equal(0x77, grown.Data[299]);

        LinkStatistics stats = link.AToB.Statistics;
        Assert.Equal(1, stats.Dropped(DropCause.Interceptor));
        Assert.Equal(1, stats.Replayed);
        Assert.Equal(20, stats.DeliveredDatagrams); // 19 originals + 1 replay
    }

    [Fact]
    public void Inject_DeliversAtTheGivenTimeWithTheGivenSource()
    {
        var (net, _, receiver, _) = Pair(12, new LinkConditions(), count: 0, size: 64, intervalUs: 0);
        var spoofed = new SimAddress(9, 9);

        net.Inject(spoofed, ReceiverAddress, new byte[] { 0, 0, 0, 0, 0, 0, 0, 42 }, atUs: 7_000);
        net.RunFor(10_000);

        DatagramArrival arrival = Assert.Single(receiver.Arrivals);
        Assert.Equal(7_000, arrival.TimeUs);
        Assert.Equal(42, arrival.Sequence);
        Assert.Equal(spoofed, arrival.From);
    }

    [Fact]
    public void TooLarge_NoRoute_AndNoEndpoint_AreDroppedAndCounted()
    {
        var (net, sender, receiver, link) = Pair(13, new LinkConditions { DelayUs = 1_000, MaxDatagramSize = 1_200 }, count: 2, size: 1_201, intervalUs: 0);
        net.RunFor(10_000);
        Assert.Empty(receiver.Arrivals);
        Assert.Equal(2, link.AToB.Statistics.Dropped(DropCause.TooLarge));

        net.Send(SenderAddress, new SimAddress(3, 1), new byte[10]);
        Assert.Equal(1, net.NoRouteDrops);

        net.Send(SenderAddress, new SimAddress(2, 444), new byte[10]);
        net.RunFor(10_000);
        Assert.Equal(1, link.AToB.Statistics.Dropped(DropCause.NoEndpoint));
    }

    [Fact]
    public void Rebind_MovesTheEndpoint_AndInFlightDatagramsToTheOldAddressAreLost()
    {
        var (net, sender, receiver, link) = Pair(14, new LinkConditions { DelayUs = 10_000 }, count: 0, size: 64, intervalUs: 0);
        receiver.Echo = true;
        var sender2 = new PacedSender(ReceiverAddress, count: 2, size: 64, intervalUs: 20_000);
        net.AddEndpoint(new SimAddress(1, 50001), sender2);

        net.RunFor(5_000); // datagram 0 in flight
        net.Rebind(sender2, new SimAddress(1, 60000)); // NAT rebinding of the sender: the echo of #0 goes to the old port
        net.RunFor(100_000);

        Assert.Equal(2, receiver.Arrivals.Count);
        Assert.Equal(new SimAddress(1, 50001), receiver.Arrivals[0].From);
        Assert.Equal(new SimAddress(1, 60000), receiver.Arrivals[1].From);
        DatagramArrival echo = Assert.Single(sender2.Received.Arrivals);
        Assert.Equal(1, echo.Sequence);
        Assert.Equal(1, link.BToA.Statistics.Dropped(DropCause.NoEndpoint));
    }

    [Fact]
    public void SameSeed_ReproducesTheIdenticalTrace_DifferentSeedDiffers()
    {
        (IReadOnlyList<SimTraceEntry> trace, ulong fingerprint) first = ImpairedRun(seed: 42);
        (IReadOnlyList<SimTraceEntry> trace, ulong fingerprint) second = ImpairedRun(seed: 42);
        (IReadOnlyList<SimTraceEntry> trace, ulong fingerprint) other = ImpairedRun(seed: 43);

        Assert.True(first.trace.Count > 4_000);
        Assert.Equal(first.trace, second.trace);
        Assert.Equal(first.fingerprint, second.fingerprint);
        Assert.NotEqual(first.fingerprint, other.fingerprint);
        Assert.NotEqual(first.trace, other.trace);
    }

    [Fact]
    public void RunUntil_StopsAtTheEventBound_WhenAnEndpointLivelocks()
    {
        var net = new SimulatedNetwork(15) { MaxEventsPerRun = 10_000 };
        var stuck = new StuckTimerEndpoint();
        net.AddEndpoint(new SimAddress(1, 1), stuck);

        Assert.Equal(SimRunResult.EventLimit, net.RunUntil(() => false, long.MaxValue));
        Assert.Equal(10_000, stuck.Fired);
        Assert.Equal(1_000, net.NowUs);
    }

    [Fact]
    public void RunFor_StopsExactlyAtTheTimeBound_AndResumes()
    {
        var (net, sender, receiver, _) = Pair(16, new LinkConditions { DelayUs = 500 }, count: 10, size: 64, intervalUs: 1_000);

        Assert.Equal(SimRunResult.TimeLimit, net.RunFor(5_000));
        Assert.Equal(5_000, net.NowUs);
        Assert.Equal(6, sender.Sent);             // sends at 0, 1000, ..., 5000 (bound inclusive)
        Assert.Equal(5, receiver.Arrivals.Count); // #5 arrives at 5500

        Assert.Equal(SimRunResult.ConditionMet, net.RunUntil(() => receiver.Arrivals.Count == 8, maxTimeUs: 1_000_000));
        Assert.Equal(7_500, net.NowUs);

        Assert.Equal(SimRunResult.TimeLimit, net.RunUntil(() => false, maxTimeUs: 8_000));
        Assert.Equal(8_000, net.NowUs);

        Assert.Equal(SimRunResult.Idle, net.RunFor(1_000_000));
        Assert.Equal(1_008_000, net.NowUs);
        Assert.Equal(10, receiver.Arrivals.Count);
    }

    [Fact]
    public void SimAddress_RoundTripsThroughIPEndPoint()
    {
        var address = new SimAddress(0x010203, 4433);
        System.Net.IPEndPoint endPoint = address.ToIPEndPoint();
        Assert.Equal("10.1.2.3:4433", endPoint.ToString());
        Assert.Equal(address, SimAddress.FromIPEndPoint(endPoint));
        Assert.Throws<ArgumentException>(() => SimAddress.FromIPEndPoint(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 1)));
    }

    private static (IReadOnlyList<SimTraceEntry> Trace, ulong Fingerprint) ImpairedRun(int seed)
    {
        var conditions = new LinkConditions
        {
            DelayUs = 20_000,
            JitterUs = 3_000,
            AllowJitterReordering = true,
            BandwidthBitsPerSecond = 50_000_000,
            QueueLimitBytes = 30_000,
            LossProbability = 0.02,
            BurstLoss = new GilbertElliottLoss { GoodToBad = 0.005, BadToGood = 0.5 },
            ReorderProbability = 0.01,
            ReorderExtraDelayUs = 2_000,
            DuplicationProbability = 0.01,
            CorruptionProbability = 0.01,
        };
        var (net, _, receiver, _) = Pair(seed, conditions, count: 2_000, size: 1_200, intervalUs: 150);
        receiver.Echo = true;
        net.RunFor(5_000_000);
        return (net.Trace.ToArray(), net.TraceFingerprint());
    }

    private static (SimulatedNetwork Net, PacedSender Sender, RecordingReceiver Receiver, SimulatedLink Link) Pair(
        int seed, LinkConditions conditions, int count, int size, long intervalUs, LinkConditions? bToA = null)
    {
        var net = new SimulatedNetwork(seed);
        var sender = new PacedSender(ReceiverAddress, count, size, intervalUs);
        var receiver = new RecordingReceiver();
        net.AddEndpoint(SenderAddress, sender);
        net.AddEndpoint(ReceiverAddress, receiver);
        SimulatedLink link = net.Connect(SenderAddress.Host, ReceiverAddress.Host, conditions, bToA);
        return (net, sender, receiver, link);
    }

    private static long[] Sequences(RecordingReceiver receiver) => receiver.Arrivals.Select(a => a.Sequence).ToArray();

    // Within 5 standard deviations of the binomial mean: a seeded run is deterministic, and an implementation
    // whose rate is off by more than that (e.g. the probability applied twice, or never) fails.
    private static void AssertBinomial(long observed, long n, double p)
    {
        double mean = n * p;
        double bound = 5 * Math.Sqrt(n * p * (1 - p));
        Assert.InRange(observed, (long)Math.Floor(mean - bound), (long)Math.Ceiling(mean + bound));
    }
}
