using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class AllocationTests
{
    private struct CountingSink : ISentPacketSink<long>
    {
        public long Acked;
        public long Lost;

        public void OnPacketAcked(PacketNumberSpace space, in SentPacket<long> packet) => Acked++;

        public void OnPacketLost(PacketNumberSpace space, in SentPacket<long> packet) => Lost++;
    }

    private static void Exchange(RecoveryController<long> c, ReceivedPacketTracker rx, Pacer pacer, AckRange[] ranges, ref CountingSink sink, ref long pn, ref long now, int count)
    {
        for (int i = 0; i < count; i++)
        {
            now += 1_000;
            pacer.GetNextSendTimeUs(1200, now, c.CongestionController.CongestionWindow, c.Rtt.SmoothedRttUs, false);
            pacer.OnPacketSent(1200, now, c.CongestionController.CongestionWindow, c.Rtt.SmoothedRttUs, false);
            c.OnPacketSent(PacketNumberSpace.ApplicationData, pn, now, 1200, true, true, pn);
            // Every 7th packet is lost on the path; the sender finds out by packet threshold.
            if (pn % 7 != 3)
            {
                rx.OnPacketReceived(pn, true, now, EcnCodepoint.Ect0);
            }

            if (rx.ShouldSendAck(now))
            {
                int n = rx.WriteAckRanges(ranges);
                rx.OnAckSent();
                c.OnAckReceived(PacketNumberSpace.ApplicationData, ranges.AsSpan(0, n), 0, rx.EcnCounts, now + 500, ref sink);
                rx.OnAckOfAck(pn - 10);
            }

            pn += pn % 11 == 5 ? 2 : 1; // occasional deliberate skip
            c.OnLossDetectionTimeout(now + 500, ref sink);
        }
    }

    [Fact]
    public void SteadyState_SendAckLoseCycle_AllocatesNothing()
    {
        var c = new RecoveryController<long>(isServer: true, new CubicCongestionController(1200));
        c.OnHandshakeConfirmed(0);
        var rx = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        var pacer = new Pacer(1200);
        var ranges = new AckRange[32];
        var sink = default(CountingSink);
        long pn = 0;
        long now = 0;
        Exchange(c, rx, pacer, ranges, ref sink, ref pn, ref now, 5_000); // warm up: JIT, ring growth

        long before = GC.GetAllocatedBytesForCurrentThread();
        Exchange(c, rx, pacer, ranges, ref sink, ref pn, ref now, 20_000);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(0, allocated);
        Assert.True(sink.Acked > 15_000);
        Assert.True(sink.Lost > 1_000);
    }

    [Fact]
    public void Bbr_SteadyState_SendAckLoseCycle_AllocatesNothing()
    {
        var bbr = new BbrCongestionController(1200, seed: 7);
        var c = new RecoveryController<long>(isServer: true, bbr);
        c.OnHandshakeConfirmed(0);
        var rx = new ReceivedPacketTracker(PacketNumberSpace.ApplicationData);
        var pacer = new Pacer(1200, rateSource: bbr);
        var ranges = new AckRange[32];
        var sink = default(CountingSink);
        long pn = 0;
        long now = 0;
        Exchange(c, rx, pacer, ranges, ref sink, ref pn, ref now, 5_000);
        c.OnApplicationLimited(now);

        long before = GC.GetAllocatedBytesForCurrentThread();
        Exchange(c, rx, pacer, ranges, ref sink, ref pn, ref now, 20_000);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(0, allocated);
        Assert.True(sink.Acked > 15_000);
        Assert.True(sink.Lost > 1_000);
        Assert.True(bbr.Delivered > 0 && bbr.Lost > 0);
    }
}
