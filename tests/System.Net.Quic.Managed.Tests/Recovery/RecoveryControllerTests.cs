using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;
using AckRange = System.Net.Quic.Managed.Wire.AckRange;
using EcnCounts = System.Net.Quic.Managed.Wire.EcnCounts;

namespace System.Net.Quic.Managed.Tests.Recovery;

public class RecoveryControllerTests
{
    private const int Mds = 1200;
    private const long Pto0 = 999_000; // 333 ms + 4 * 166.5 ms

    private static RecoveryController<int> Create(bool isServer) => new(isServer, new NewRenoCongestionController(Mds));

    private static AckProcessingResult Ack(RecoveryController<int> c, PacketNumberSpace space, long smallest, long largest, long nowUs, long ackDelayUs = 0, EcnCounts? ecn = null)
    {
        var sink = RecordingSink.Create();
        return c.OnAckReceived(space, new[] { new AckRange(smallest, largest) }, ackDelayUs, ecn, nowUs, ref sink);
    }

    private static LossTimeoutAction Fire(RecoveryController<int> c, long nowUs)
    {
        var sink = RecordingSink.Create();
        return c.OnLossDetectionTimeout(nowUs, ref sink);
    }

    [Fact]
    public void Pto_InitialSpace_FiresAfterInitialPto_WithExponentialBackoff()
    {
        var c = Create(isServer: false);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Assert.Equal(Pto0, c.LossDetectionTimerUs);

        Assert.Equal(LossTimeoutKind.None, Fire(c, Pto0 - 1).Kind);
        LossTimeoutAction a = Fire(c, Pto0);
        Assert.Equal(LossTimeoutKind.Probe, a.Kind);
        Assert.Equal(PacketNumberSpace.Initial, a.Space);
        Assert.Equal(2, a.ProbePackets);
        Assert.Equal(1, c.PtoCount);
        Assert.Equal(2 * Pto0, c.LossDetectionTimerUs); // counted from the last ack-eliciting send, doubled

        Fire(c, 2 * Pto0);
        Assert.Equal(2, c.PtoCount);
        Assert.Equal(4 * Pto0, c.LossDetectionTimerUs);
    }

    [Fact]
    public void Pto_EarliestSpaceWins()
    {
        var c = Create(isServer: false);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        c.OnHandshakeKeysAvailable(0);
        c.OnPacketSent(PacketNumberSpace.Handshake, 0, 10_000, Mds, true, true, 0);
        Assert.Equal(Pto0, c.GetPtoTimeAndSpace(10_000, out PacketNumberSpace space));
        Assert.Equal(PacketNumberSpace.Initial, space);

        c.DiscardPacketNumberSpace(PacketNumberSpace.Initial, 10_000);
        Assert.Equal(10_000 + Pto0, c.LossDetectionTimerUs);
        Assert.Equal(PacketNumberSpace.Handshake, Fire(c, 10_000 + Pto0).Space);
    }

    [Fact]
    public void Pto_ApplicationData_NotArmedBeforeConfirmation_ThenIncludesMaxAckDelayWithBackoff()
    {
        var c = Create(isServer: true);
        c.OnPacketSent(PacketNumberSpace.ApplicationData, 0, 0, Mds, true, true, 0);
        Assert.Equal(RecoveryConstants.NoTime, c.LossDetectionTimerUs);

        c.OnHandshakeConfirmed(0);
        Assert.Equal(Pto0 + 25_000, c.LossDetectionTimerUs);
        LossTimeoutAction a = Fire(c, Pto0 + 25_000);
        Assert.Equal(PacketNumberSpace.ApplicationData, a.Space);
        Assert.Equal(2 * (Pto0 + 25_000), c.LossDetectionTimerUs);
    }

    [Fact]
    public void AntiDeadlock_ClientArmsPtoWithNothingInFlight_FromNow()
    {
        var c = Create(isServer: false);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Ack(c, PacketNumberSpace.Initial, 0, 0, 100_000);
        // srtt 100 ms, rttvar 50 ms: PTO = 300 ms from now (nothing in flight, server has not validated us).
        Assert.Equal(400_000, c.LossDetectionTimerUs);

        LossTimeoutAction a = Fire(c, 400_000);
        Assert.Equal(LossTimeoutKind.AntiDeadlockProbe, a.Kind);
        Assert.Equal(PacketNumberSpace.Initial, a.Space);
        Assert.Equal(1, a.ProbePackets);
        Assert.Equal(400_000 + 600_000, c.LossDetectionTimerUs);

        c.OnHandshakeKeysAvailable(400_000);
        a = Fire(c, 1_000_000);
        Assert.Equal(LossTimeoutKind.AntiDeadlockProbe, a.Kind);
        Assert.Equal(PacketNumberSpace.Handshake, a.Space);
    }

    [Fact]
    public void AntiDeadlock_NotForServer_NorAfterHandshakeAck()
    {
        var server = Create(isServer: true);
        server.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Ack(server, PacketNumberSpace.Initial, 0, 0, 100_000);
        Assert.Equal(RecoveryConstants.NoTime, server.LossDetectionTimerUs);

        var client = Create(isServer: false);
        client.OnHandshakeKeysAvailable(0);
        client.OnPacketSent(PacketNumberSpace.Handshake, 0, 0, Mds, true, true, 0);
        Ack(client, PacketNumberSpace.Handshake, 0, 0, 100_000);
        Assert.True(client.PeerCompletedAddressValidation);
        Assert.Equal(RecoveryConstants.NoTime, client.LossDetectionTimerUs);
    }

    [Fact]
    public void PtoCount_ClientKeepsBackoffUntilAddressValidated_ServerResets()
    {
        var client = Create(isServer: false);
        client.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Fire(client, Pto0);
        client.OnPacketSent(PacketNumberSpace.Initial, 1, Pto0, Mds, true, true, 0);
        Ack(client, PacketNumberSpace.Initial, 1, 1, Pto0 + 50_000);
        Assert.Equal(1, client.PtoCount);

        var server = Create(isServer: true);
        server.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Fire(server, Pto0);
        server.OnPacketSent(PacketNumberSpace.Initial, 1, Pto0, Mds, true, true, 0);
        Ack(server, PacketNumberSpace.Initial, 1, 1, Pto0 + 50_000);
        Assert.Equal(0, server.PtoCount);
    }

    [Fact]
    public void Server_AmplificationLimited_HasNoTimer()
    {
        var c = Create(isServer: true);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        Assert.Equal(Pto0, c.LossDetectionTimerUs);
        c.SetAmplificationLimited(true, 0);
        Assert.Equal(RecoveryConstants.NoTime, c.LossDetectionTimerUs);
        c.SetAmplificationLimited(false, 0);
        Assert.Equal(Pto0, c.LossDetectionTimerUs);
    }

    [Fact]
    public void LossTimer_TimeThreshold_DeclaresLossAndCongestionEvent()
    {
        var c = Create(isServer: true);
        c.OnHandshakeConfirmed(0);
        c.OnPacketSent(PacketNumberSpace.ApplicationData, 0, 0, Mds, true, true, 0);
        c.OnPacketSent(PacketNumberSpace.ApplicationData, 1, 1_000, Mds, true, true, 0);
        Ack(c, PacketNumberSpace.ApplicationData, 1, 1, 100_000);
        // latest_rtt = 99 ms; loss delay = 9/8 * 99 ms = 111.375 ms after packet 0 was sent.
        Assert.Equal(111_375, c.LossDetectionTimerUs);
        Assert.Equal(12_000, c.CongestionController.CongestionWindow);

        var sink = RecordingSink.Create();
        LossTimeoutAction a = c.OnLossDetectionTimeout(111_375, ref sink);
        Assert.Equal(LossTimeoutKind.LossDetected, a.Kind);
        Assert.Equal(PacketNumberSpace.ApplicationData, a.Space);
        Assert.Equal(1, a.LostCount);
        Assert.Equal(new long[] { 0 }, sink.Lost);
        Assert.Equal(6_000, c.CongestionController.CongestionWindow);
        Assert.Equal(0, c.CongestionController.BytesInFlight);
        Assert.Equal(0, c.PtoCount);
    }

    [Fact]
    public void Discard_RemovesBytesInFlight_AndRejectsFurtherSends()
    {
        var c = Create(isServer: false);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        c.OnPacketSent(PacketNumberSpace.Initial, 1, 0, 500, true, true, 0);
        Assert.Equal(Mds + 500, c.CongestionController.BytesInFlight);
        c.DiscardPacketNumberSpace(PacketNumberSpace.Initial, 10);
        Assert.Equal(0, c.CongestionController.BytesInFlight);
        Assert.Equal(0, c.GetTracker(PacketNumberSpace.Initial).OutstandingCount);
        Assert.True(c.IsDiscarded(PacketNumberSpace.Initial));
        Assert.Throws<InvalidOperationException>(() => c.OnPacketSent(PacketNumberSpace.Initial, 2, 0, Mds, true, true, 0));
        Assert.Equal(12_000, c.CongestionController.CongestionWindow); // not a congestion signal
    }

    [Fact]
    public void Ack_Error_IsReturned_AndStateUnchanged()
    {
        var c = Create(isServer: true);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        AckProcessingResult r = Ack(c, PacketNumberSpace.Initial, 0, 5, 1000);
        Assert.Equal(TransportErrorCode.ProtocolViolation, r.Error);
        Assert.Equal(Mds, c.CongestionController.BytesInFlight);
        Assert.False(c.Rtt.HasSample);
    }

    [Fact]
    public void Ack_InitialSpace_IgnoresAckDelay()
    {
        var c = Create(isServer: true);
        c.OnPacketSent(PacketNumberSpace.Initial, 0, 0, Mds, true, true, 0);
        c.OnPacketSent(PacketNumberSpace.Initial, 1, 0, Mds, true, true, 0);
        Ack(c, PacketNumberSpace.Initial, 0, 0, 100_000);
        Ack(c, PacketNumberSpace.Initial, 1, 1, 200_000, ackDelayUs: 50_000);
        // Second sample 200 ms taken whole: srtt = 7/8*100 + 1/8*200 = 112.5 ms.
        Assert.Equal(112_500, c.Rtt.SmoothedRttUs);
    }

    [Fact]
    public void Ecn_CeIncrease_IsACongestionEvent_Once()
    {
        var c = Create(isServer: true);
        c.OnHandshakeConfirmed(0);
        for (int pn = 0; pn < 4; pn++)
        {
            c.OnPacketSent(PacketNumberSpace.ApplicationData, pn, pn * 10, Mds, true, true, 0);
        }

        Ack(c, PacketNumberSpace.ApplicationData, 0, 0, 50_000, ecn: new EcnCounts(1, 0, 0));
        long grown = c.CongestionController.CongestionWindow;
        Ack(c, PacketNumberSpace.ApplicationData, 0, 1, 60_000, ecn: new EcnCounts(1, 0, 1));
        Assert.Equal(grown / 2, c.CongestionController.CongestionWindow);
        Ack(c, PacketNumberSpace.ApplicationData, 0, 2, 70_000, ecn: new EcnCounts(2, 0, 1));
        Assert.Equal(grown / 2, c.CongestionController.CongestionWindow);
    }

    [Fact]
    public void PersistentCongestion_CollapsesWindowToMinimum()
    {
        var c = Create(isServer: true);
        c.OnHandshakeConfirmed(0);
        c.PeerMaxAckDelayUs = 0;
        c.OnPacketSent(PacketNumberSpace.ApplicationData, 0, 0, Mds, true, true, 0);
        Ack(c, PacketNumberSpace.ApplicationData, 0, 0, 100_000);
        for (int i = 1; i <= 5; i++)
        {
            c.OnPacketSent(PacketNumberSpace.ApplicationData, i, 200_000 + (i - 1) * 250_000, Mds, true, true, 0);
        }

        c.OnPacketSent(PacketNumberSpace.ApplicationData, 6, 1_300_000, Mds, true, true, 0);
        var sink = RecordingSink.Create();
        c.OnAckReceived(PacketNumberSpace.ApplicationData, new[] { new AckRange(6, 6) }, 0, null, 1_400_000, ref sink);
        Assert.Equal(new long[] { 1, 2, 3, 4, 5 }, sink.Lost);
        // Duration (100 + 4*37.5 + 0) * 3 = 750 ms < 1 s between packets 1 and 5.
        Assert.Equal(750_000, c.PersistentCongestionDurationUs);
        // B.8: minimum window and the recovery period reset; then (B.5, after OnPacketsLost) the ACK of packet 6
        // grows it in slow start by one datagram. Without persistent congestion it would be 6000 (halved, in recovery).
        Assert.Equal(2 * Mds + Mds, c.CongestionController.CongestionWindow);
        Assert.Equal(long.MinValue, c.CongestionController.RecoveryStartTimeUs);
    }

    private struct ZeroRttFilter : ISentPacketFilter<int>
    {
        public bool Matches(in SentPacket<int> packet) => packet.Meta == 1;
    }

    [Fact]
    public void RemoveFromFlight_RejectedZeroRtt_NoCongestionSignal()
    {
        var c = Create(isServer: false);
        for (int pn = 0; pn < 4; pn++)
        {
            c.OnPacketSent(PacketNumberSpace.ApplicationData, pn, 0, Mds, true, true, pn < 3 ? 1 : 0);
        }

        var filter = new ZeroRttFilter();
        var sink = RecordingSink.Create();
        Assert.Equal(3 * Mds, c.RemoveFromFlight(PacketNumberSpace.ApplicationData, ref filter, ref sink, 10));
        Assert.Equal(new long[] { 0, 1, 2 }, sink.Lost);
        Assert.Equal(Mds, c.CongestionController.BytesInFlight);
        Assert.Equal(12_000, c.CongestionController.CongestionWindow);
        Assert.Equal(1, c.GetTracker(PacketNumberSpace.ApplicationData).OutstandingCount);
        // A later ACK of a removed packet is not a new acknowledgment.
        c.OnHandshakeConfirmed(10);
        AckProcessingResult r = Ack(c, PacketNumberSpace.ApplicationData, 0, 3, 100_000);
        Assert.Equal(1, r.NewlyAckedCount);
    }

    [Fact]
    public void PtoDuration_AddsMaxAckDelayOnceConfirmed()
    {
        var c = Create(isServer: true);
        Assert.Equal(Pto0, c.PtoDurationUs);
        c.OnHandshakeConfirmed(0);
        Assert.Equal(Pto0 + 25_000, c.PtoDurationUs);
    }
}
