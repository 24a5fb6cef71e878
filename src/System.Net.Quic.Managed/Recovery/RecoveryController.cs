using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Loss detection across the three packet number spaces: sent-packet tracking, RTT, the loss detection timer
/// (time-threshold loss timer and PTO) and the congestion controller. RFC 9002 §6 and Appendix A. Sans-IO: the owner
/// reads <see cref="LossDetectionTimerUs"/> after every call and calls <see cref="OnLossDetectionTimeout"/> when due.
/// </summary>
internal sealed class RecoveryController<TMeta> where TMeta : struct
{
    private const int MaxBackoffShift = 30;

    private readonly SentPacketTracker<TMeta>[] _spaces;
    private readonly bool[] _discarded = new bool[3];
    private readonly long[] _ecnCe = new long[3];

    // The controller when it samples delivery rates (BBR); null for NewReno and CUBIC, which then see no extra calls.
    private readonly IRateSamplingCongestionController? _sampler;

    public RecoveryController(bool isServer, ICongestionController congestionController, RttEstimator? rtt = null)
    {
        IsServer = isServer;
        CongestionController = congestionController ?? throw new ArgumentNullException(nameof(congestionController));
        Rtt = rtt ?? new RttEstimator();
        _sampler = congestionController as IRateSamplingCongestionController;
        _spaces =
        [
            new SentPacketTracker<TMeta>(PacketNumberSpace.Initial, 16),
            new SentPacketTracker<TMeta>(PacketNumberSpace.Handshake, 16),
            // Grows by doubling with the window: an idle connection's handshake leaves a handful of packets in flight at
            // once (HANDSHAKE_DONE, NEW_CONNECTION_ID, session tickets), and each entry is 88 bytes.
            new SentPacketTracker<TMeta>(PacketNumberSpace.ApplicationData, 8),
        ];
    }

    public bool IsServer { get; }

    public RttEstimator Rtt { get; }

    public ICongestionController CongestionController { get; }

    /// <summary>pto_count. RFC 9002 A.3.</summary>
    public int PtoCount { get; private set; }

    /// <summary>When the loss detection timer fires; <see cref="RecoveryConstants.NoTime"/> when disarmed.</summary>
    public long LossDetectionTimerUs { get; private set; } = RecoveryConstants.NoTime;

    /// <summary>The peer's max_ack_delay transport parameter (default 25 ms). RFC 9000 §18.2.</summary>
    public long PeerMaxAckDelayUs { get; set; } = RecoveryConstants.DefaultMaxAckDelayUs;

    public bool HandshakeConfirmed { get; private set; }

    public bool HasHandshakeKeys { get; private set; }

    /// <summary>A client received an ACK in the Handshake space (the server has validated its address).</summary>
    public bool HandshakeAckReceived { get; private set; }

    /// <summary>Server only: blocked by the anti-amplification limit (RFC 9000 §8.1), so no PTO is armed.</summary>
    public bool IsAmplificationLimited { get; private set; }

    /// <summary>RFC 9002 A.6 PeerCompletedAddressValidation.</summary>
    public bool PeerCompletedAddressValidation => IsServer || HandshakeAckReceived || HandshakeConfirmed;

    /// <summary>(smoothed_rtt + max(4*rttvar, kGranularity) + max_ack_delay) * kPersistentCongestionThreshold. RFC 9002 §7.6.1.</summary>
    public long PersistentCongestionDurationUs => (Rtt.PtoBaseUs + PeerMaxAckDelayUs) * RecoveryConstants.PersistentCongestionThreshold;

    /// <summary>The current PTO period without backoff: smoothed_rtt + max(4*rttvar, kGranularity), plus max_ack_delay
    /// once the handshake is confirmed. For the closing and draining periods (3 * PTO, RFC 9000 §10.2) and idle
    /// timeout floor (RFC 9000 §10.1).</summary>
    public long PtoDurationUs => Rtt.PtoBaseUs + (HandshakeConfirmed ? PeerMaxAckDelayUs : 0);

    public SentPacketTracker<TMeta> GetTracker(PacketNumberSpace space) => _spaces[(int)space];

    public bool IsDiscarded(PacketNumberSpace space) => _discarded[(int)space];

    /// <summary>Ack-eliciting packets in flight over all spaces.</summary>
    public bool HasAckElicitingInFlight
        => _spaces[0].AckElicitingInFlight + _spaces[1].AckElicitingInFlight + _spaces[2].AckElicitingInFlight > 0;

    /// <summary>
    /// Ack-eliciting packets in flight that a PTO can cover. RFC 9002 §6.2.1 arms no Application Data PTO before the
    /// handshake is confirmed, so until then 0-RTT (or 0.5-RTT) packets must not count either: a client whose 0-RTT filled
    /// its window after losing its ClientHello would otherwise get neither a PTO nor the anti-deadlock probe, and stall.
    /// </summary>
    private bool HasPtoEligibleInFlight
        => _spaces[0].AckElicitingInFlight + _spaces[1].AckElicitingInFlight > 0 || (HandshakeConfirmed && _spaces[2].AckElicitingInFlight > 0);

    /// <summary>RFC 9002 A.5 OnPacketSent. Call for every packet sent, including ACK-only ones (inFlight false when the
    /// packet holds only ACK/PADDING/CONNECTION_CLOSE... per RFC 9002 §2 "in flight" definition).</summary>
    public void OnPacketSent(PacketNumberSpace space, long packetNumber, long nowUs, int size, bool ackEliciting, bool inFlight, in TMeta meta,
        bool ecnMarked = false, bool pathProbe = false)
    {
        if (_discarded[(int)space])
        {
            throw new InvalidOperationException("Packet sent in a discarded packet number space.");
        }

        if (inFlight && _sampler is not null)
        {
            PacketDeliveryState delivery = _sampler.OnSending(size, nowUs);
            _spaces[(int)space].OnPacketSent(packetNumber, nowUs, size, ackEliciting, inFlight, in meta, ecnMarked, pathProbe, in delivery);
        }
        else
        {
            _spaces[(int)space].OnPacketSent(packetNumber, nowUs, size, ackEliciting, inFlight, in meta, ecnMarked, pathProbe);
        }

        if (inFlight)
        {
            CongestionController.OnPacketSent(size, nowUs);
            SetLossDetectionTimer(nowUs);
        }
    }

    /// <summary>
    /// RFC 9002 A.7 OnAckReceived. <paramref name="ranges"/> are the frame's ranges largest first;
    /// <paramref name="ackDelayUs"/> is the decoded ACK Delay already multiplied by 2^ack_delay_exponent;
    /// <paramref name="ecn"/> the counts of an ACK_ECN frame (null for a plain ACK). On error, nothing changed and
    /// the connection must close with the returned code.
    /// </summary>
    public AckProcessingResult OnAckReceived<TSink>(
        PacketNumberSpace space,
        ReadOnlySpan<AckRange> ranges,
        long ackDelayUs,
        EcnCounts? ecn,
        long nowUs,
        ref TSink sink)
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        SentPacketTracker<TMeta> tracker = _spaces[(int)space];
        long priorInFlight = CongestionController.BytesInFlight;
        AckProcessingResult result = tracker.OnAckReceived(ranges, ref sink, _sampler, nowUs);
        if (result.IsError)
        {
            return result;
        }

        if (space == PacketNumberSpace.Handshake)
        {
            HandshakeAckReceived = true;
        }

        if (result.NewlyAckedCount == 0)
        {
            return result;
        }

        if (result.ShouldSampleRtt)
        {
            // §5.3: Initial ACKs are not delayed by the peer, so their ack delay is ignored.
            long ackDelay = space == PacketNumberSpace.Initial ? 0 : ackDelayUs;
            Rtt.OnSample(nowUs - result.LargestNewlyAckedTimeSentUs, ackDelay, HandshakeConfirmed, PeerMaxAckDelayUs, nowUs);
        }

        // B.7 ProcessECN: an increased CE count is a congestion signal.
        if (ecn is EcnCounts counts && counts.Ce > _ecnCe[(int)space])
        {
            _ecnCe[(int)space] = counts.Ce;
            CongestionController.OnCongestionEvent(result.LargestNewlyAckedTimeSentUs, nowUs);
        }

        LossDetectionResult loss = DetectLostPackets(tracker, nowUs, ref sink);
        ApplyLosses(in loss, nowUs);

        if (result.NewlyAckedInFlightBytes > 0)
        {
            CongestionController.OnPacketsAcked(result.NewlyAckedInFlightBytes, result.LargestNewlyAckedTimeSentUs, priorInFlight, nowUs, Rtt);
        }

        // A.7: the client keeps backing off until it knows the server validated its address.
        if (PeerCompletedAddressValidation)
        {
            PtoCount = 0;
        }

        SetLossDetectionTimer(nowUs);
        return result;
    }

    /// <summary>
    /// RFC 9002 B.7 ProcessECN, for an owner that validates ECN itself (RFC 9000 §13.4.2) and passes no counts to
    /// <see cref="OnAckReceived"/>: the peer's CE count grew, a congestion event for the packet sent at
    /// <paramref name="timeSentUs"/> (once per recovery period, like loss).
    /// </summary>
    public void OnEcnCongestion(long timeSentUs, long nowUs) => CongestionController.OnCongestionEvent(timeSentUs, nowUs);

    /// <summary>
    /// The owner had nothing to send although neither the congestion window nor the pacer held it back: a rate-sampling
    /// controller marks the samples that follow as application limited (draft-ietf-ccwg-bbr §4.5.2.2). No-op otherwise.
    /// </summary>
    public void OnApplicationLimited(long nowUs) => _sampler?.OnApplicationLimited(nowUs);

    /// <summary>RFC 9002 A.9 OnLossDetectionTimeout. Returns what to send; lost packets go to <paramref name="sink"/>.</summary>
    public LossTimeoutAction OnLossDetectionTimeout<TSink>(long nowUs, ref TSink sink)
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        if (LossDetectionTimerUs == RecoveryConstants.NoTime || nowUs < LossDetectionTimerUs)
        {
            return default;
        }

        long lossTime = GetLossTimeAndSpace(out PacketNumberSpace lossSpace);
        if (lossTime != RecoveryConstants.NoTime)
        {
            LossDetectionResult loss = DetectLostPackets(_spaces[(int)lossSpace], nowUs, ref sink);
            ApplyLosses(in loss, nowUs);
            SetLossDetectionTimer(nowUs);
            return new LossTimeoutAction(LossTimeoutKind.LossDetected, lossSpace, 0, loss.LostCount);
        }

        LossTimeoutAction action;
        if (!HasPtoEligibleInFlight)
        {
            // §6.2.2.1: the client must keep the server from deadlocking on the anti-amplification limit.
            action = new LossTimeoutAction(
                LossTimeoutKind.AntiDeadlockProbe,
                HasHandshakeKeys ? PacketNumberSpace.Handshake : PacketNumberSpace.Initial,
                1,
                0);
        }
        else
        {
            GetPtoTimeAndSpace(nowUs, out PacketNumberSpace ptoSpace);
            action = new LossTimeoutAction(LossTimeoutKind.Probe, ptoSpace, 2, 0);
        }

        PtoCount++;
        SetLossDetectionTimer(nowUs);
        return action;
    }

    /// <summary>RFC 9002 A.8 GetLossTimeAndSpace: the earliest loss_time; NoTime when none.</summary>
    public long GetLossTimeAndSpace(out PacketNumberSpace space)
    {
        long time = RecoveryConstants.NoTime;
        space = PacketNumberSpace.Initial;
        for (int s = 0; s < 3; s++)
        {
            long t = _spaces[s].LossTimeUs;
            if (t < time)
            {
                time = t;
                space = (PacketNumberSpace)s;
            }
        }

        return time;
    }

    /// <summary>RFC 9002 A.8 GetPtoTimeAndSpace. NoTime when no PTO applies (e.g. only Application Data in flight
    /// before the handshake is confirmed).</summary>
    public long GetPtoTimeAndSpace(long nowUs, out PacketNumberSpace space)
    {
        int shift = Math.Min(PtoCount, MaxBackoffShift);
        long duration = SaturatingShift(Rtt.PtoBaseUs, shift);
        if (!HasPtoEligibleInFlight)
        {
            // Anti-deadlock PTO counts from now.
            space = HasHandshakeKeys ? PacketNumberSpace.Handshake : PacketNumberSpace.Initial;
            return SaturatingAdd(nowUs, duration);
        }

        long timeout = RecoveryConstants.NoTime;
        space = PacketNumberSpace.Initial;
        for (int s = 0; s < 3; s++)
        {
            SentPacketTracker<TMeta> tracker = _spaces[s];
            if (tracker.AckElicitingInFlight == 0)
            {
                continue;
            }

            if (s == (int)PacketNumberSpace.ApplicationData)
            {
                // §6.2.1: no Application Data PTO before confirmation; then max_ack_delay counts, with backoff.
                if (!HandshakeConfirmed)
                {
                    return timeout;
                }

                duration = SaturatingAdd(duration, SaturatingShift(PeerMaxAckDelayUs, shift));
            }

            long t = SaturatingAdd(tracker.TimeOfLastAckElicitingUs, duration);
            if (t < timeout)
            {
                timeout = t;
                space = (PacketNumberSpace)s;
            }
        }

        return timeout;
    }

    /// <summary>Handshake keys were installed (selects the anti-deadlock probe space).</summary>
    public void OnHandshakeKeysAvailable(long nowUs)
    {
        HasHandshakeKeys = true;
        SetLossDetectionTimer(nowUs);
    }

    /// <summary>RFC 9001 §4.1.2: the handshake is confirmed; Application Data PTO and max_ack_delay capping start.</summary>
    public void OnHandshakeConfirmed(long nowUs)
    {
        HandshakeConfirmed = true;
        SetLossDetectionTimer(nowUs);
    }

    /// <summary>Server: the anti-amplification limit blocks (or no longer blocks) sending. RFC 9002 A.6.</summary>
    public void SetAmplificationLimited(bool limited, long nowUs)
    {
        IsAmplificationLimited = limited;
        SetLossDetectionTimer(nowUs);
    }

    /// <summary>RFC 9002 A.11 OnPacketNumberSpaceDiscarded: the space's keys were discarded; its packets leave flight
    /// without being acknowledged or lost.</summary>
    public void DiscardPacketNumberSpace(PacketNumberSpace space, long nowUs)
    {
        if (_discarded[(int)space])
        {
            return;
        }

        _discarded[(int)space] = true;
        long bytes = _spaces[(int)space].DiscardAll();
        _spaces[(int)space].ReleaseStorage();
        CongestionController.OnPacketsDiscarded(bytes);
        PtoCount = 0;
        SetLossDetectionTimer(nowUs);
    }

    /// <summary>
    /// Removes selected outstanding packets from flight without a congestion reaction and reports them to the sink as
    /// lost (their frames are to be resent). Used when 0-RTT is rejected (RFC 9001 §4.6.2). Returns the count removed
    /// in bytes.
    /// </summary>
    public long RemoveFromFlight<TFilter, TSink>(PacketNumberSpace space, ref TFilter filter, ref TSink sink, long nowUs)
        where TFilter : ISentPacketFilter<TMeta>, allows ref struct
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        long bytes = _spaces[(int)space].RemoveWhere(ref filter, ref sink);
        CongestionController.OnPacketsDiscarded(bytes);
        SetLossDetectionTimer(nowUs);
        return bytes;
    }

    /// <summary>RFC 9002 A.6 SetLossDetectionTimer; public so the owner can re-evaluate after external changes.</summary>
    public void SetLossDetectionTimer(long nowUs)
    {
        long lossTime = GetLossTimeAndSpace(out _);
        if (lossTime != RecoveryConstants.NoTime)
        {
            LossDetectionTimerUs = lossTime;
            return;
        }

        if (IsServer && IsAmplificationLimited)
        {
            LossDetectionTimerUs = RecoveryConstants.NoTime;
            return;
        }

        if (!HasPtoEligibleInFlight && PeerCompletedAddressValidation)
        {
            LossDetectionTimerUs = RecoveryConstants.NoTime;
            return;
        }

        LossDetectionTimerUs = GetPtoTimeAndSpace(nowUs, out _);
    }

    private LossDetectionResult DetectLostPackets<TSink>(SentPacketTracker<TMeta> tracker, long nowUs, ref TSink sink)
        where TSink : ISentPacketSink<TMeta>, allows ref struct
        => tracker.DetectLostPackets(nowUs, Rtt.LossDelayUs, PersistentCongestionDurationUs, Rtt.HasSample, Rtt.FirstSampleTimeUs, ref sink, _sampler);

    private void ApplyLosses(in LossDetectionResult loss, long nowUs)
    {
        // B.8 OnPacketsLost.
        if (loss.LostInFlightBytes > 0) CongestionController.OnPacketsLost(loss.LostInFlightBytes);
        if (loss.HasCongestionEvent) CongestionController.OnCongestionEvent(loss.LargestLostInFlightTimeSentUs, nowUs);

        if (loss.PersistentCongestion)
        {
            Rtt.OnPersistentCongestion();
            CongestionController.OnPersistentCongestion(nowUs);
        }
    }

    private static long SaturatingAdd(long a, long b) => a > long.MaxValue - b ? long.MaxValue : a + b;

    private static long SaturatingShift(long value, int shift) => value > (long.MaxValue >> shift) ? long.MaxValue : value << shift;
}
