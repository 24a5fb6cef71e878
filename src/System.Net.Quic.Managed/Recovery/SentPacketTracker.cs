using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Sent packets of one packet number space (RFC 9002 Appendix A.1: sent_packets[pn_space]), stored in a ring buffer
/// indexed by packet number so sending, acknowledging and losing a packet allocate nothing. The ring only grows
/// (doubling) when more packets are outstanding than ever before.
/// </summary>
internal sealed class SentPacketTracker<TMeta> where TMeta : struct
{
    // Remembered deliberately skipped packet numbers (RFC 9000 §21.4 optimistic-ACK defence) that may have left the ring.
    private const int SkippedHistory = 16;
    // A larger skip is a caller bug: it would make the ring as large as the skip.
    private const long MaxSkip = 1 << 16;

    private SentPacket<TMeta>[] _ring;
    private int _mask;
    private int _head;
    private int _count;
    private long _basePn;

    private readonly long[] _skipped = new long[SkippedHistory];
    private int _skippedCount;
    private int _skippedNext;

    public SentPacketTracker(PacketNumberSpace space, int initialCapacity = 64)
    {
        Space = space;
        int capacity = 8;
        while (capacity < initialCapacity)
        {
            capacity <<= 1;
        }

        _ring = new SentPacket<TMeta>[capacity];
        _mask = capacity - 1;
    }

    public PacketNumberSpace Space { get; }

    /// <summary>Largest packet number sent so far, -1 before the first.</summary>
    public long LargestSent { get; private set; } = -1;

    /// <summary>largest_acked_packet[space], -1 (the RFC's "infinite") until an ACK arrives. RFC 9002 A.3.</summary>
    public long LargestAcked { get; private set; } = -1;

    /// <summary>loss_time[space]: when the earliest outstanding packet becomes lost by time threshold;
    /// <see cref="RecoveryConstants.NoTime"/> when none. RFC 9002 A.3.</summary>
    public long LossTimeUs { get; private set; } = RecoveryConstants.NoTime;

    /// <summary>time_of_last_ack_eliciting_packet[space]; meaningful when <see cref="AckElicitingInFlight"/> &gt; 0.</summary>
    public long TimeOfLastAckElicitingUs { get; private set; }

    /// <summary>Number of outstanding packets that are both ack-eliciting and in flight.</summary>
    public int AckElicitingInFlight { get; private set; }

    /// <summary>Sum of sizes of outstanding in-flight packets of this space.</summary>
    public long BytesInFlight { get; private set; }

    /// <summary>Number of outstanding (neither acknowledged nor lost) packets.</summary>
    public int OutstandingCount { get; private set; }

    /// <summary>Current ring capacity (for tests of the no-growth property).</summary>
    internal int Capacity => _ring.Length;

    /// <summary>Records a sent packet. Packet numbers must increase; gaps are deliberate skips that the peer must never
    /// acknowledge. RFC 9002 A.5 OnPacketSent.</summary>
    public void OnPacketSent(long packetNumber, long timeSentUs, int size, bool ackEliciting, bool inFlight, in TMeta meta,
        bool ecnMarked = false, bool pathProbe = false, in PacketDeliveryState delivery = default)
    {
        if (packetNumber <= LargestSent || packetNumber < 0 || packetNumber - LargestSent - 1 > MaxSkip)
        {
            throw new InvalidOperationException("Packet numbers must increase, with small skips only.");
        }

        if (size < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(size));
        }

        for (long skipped = LargestSent + 1; skipped < packetNumber; skipped++)
        {
            RememberSkipped(skipped);
        }

        if (_count == 0)
        {
            _basePn = packetNumber;
            _head = 0;
        }
        else
        {
            long gap = packetNumber - (_basePn + _count);
            EnsureCapacity(_count + (int)gap + 1);
            for (long i = 0; i < gap; i++)
            {
                _ring[(_head + _count) & _mask] = default;
                _count++;
            }
        }

        EnsureCapacity(_count + 1);
        ref SentPacket<TMeta> slot = ref _ring[(_head + _count) & _mask];
        _count++;
        slot.PacketNumber = packetNumber;
        slot.TimeSentUs = timeSentUs;
        slot.Size = size;
        slot.AckEliciting = ackEliciting;
        slot.InFlight = inFlight;
        slot.State = SentPacketState.Outstanding;
        slot.Meta = meta;
        slot.EcnMarked = ecnMarked;
        slot.PathProbe = pathProbe;
        slot.Delivery = delivery;

        LargestSent = packetNumber;
        OutstandingCount++;
        if (inFlight)
        {
            BytesInFlight += size;
            if (ackEliciting)
            {
                AckElicitingInFlight++;
                TimeOfLastAckElicitingUs = timeSentUs;
            }
        }
    }

    /// <summary>
    /// Applies an ACK frame's ranges (largest first, as decoded) and reports newly acknowledged packets to
    /// <paramref name="sink"/> in increasing packet-number order. State is untouched when an error is returned.
    /// RFC 9002 A.7 OnAckReceived / DetectAndRemoveAckedPackets. A <paramref name="sampler"/>, when given, is told of each
    /// newly acknowledged in-flight packet (with <paramref name="nowUs"/>) for its delivery-rate estimate.
    /// </summary>
    public AckProcessingResult OnAckReceived<TSink>(ReadOnlySpan<AckRange> ranges, ref TSink sink,
        IRateSamplingCongestionController? sampler = null, long nowUs = 0)
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        var result = new AckProcessingResult { LargestNewlyAckedPacketNumber = -1 };
        if (ranges.IsEmpty)
        {
            return Fail(ref result, TransportErrorCode.FrameEncodingError, "ACK frame without ranges");
        }

        for (int i = 0; i < ranges.Length; i++)
        {
            AckRange r = ranges[i];
            if (r.Smallest < 0 || r.Smallest > r.Largest || (i > 0 && r.Largest >= ranges[i - 1].Smallest))
            {
                return Fail(ref result, TransportErrorCode.FrameEncodingError, "ACK ranges not descending and disjoint");
            }
        }

        long largest = ranges[0].Largest;
        // RFC 9000 §13.1: acknowledging a packet never sent is a PROTOCOL_VIOLATION.
        if (largest > LargestSent)
        {
            return Fail(ref result, TransportErrorCode.ProtocolViolation, "ACK of a packet number never sent");
        }

        for (int s = 0; s < _skippedCount; s++)
        {
            if (RangesContain(ranges, _skipped[s]))
            {
                return Fail(ref result, TransportErrorCode.ProtocolViolation, "ACK of a skipped packet number");
            }
        }

        long windowEnd = _basePn + _count - 1;
        for (int i = 0; i < ranges.Length; i++)
        {
            long lo = Math.Max(ranges[i].Smallest, _basePn);
            long hi = Math.Min(ranges[i].Largest, windowEnd);
            for (long pn = lo; pn <= hi; pn++)
            {
                if (SlotAt(pn).State == SentPacketState.NotSent)
                {
                    return Fail(ref result, TransportErrorCode.ProtocolViolation, "ACK of a skipped packet number");
                }
            }
        }

        LargestAcked = Math.Max(LargestAcked, largest);

        for (int i = ranges.Length - 1; i >= 0; i--)
        {
            long lo = Math.Max(ranges[i].Smallest, _basePn);
            long hi = Math.Min(ranges[i].Largest, windowEnd);
            for (long pn = lo; pn <= hi; pn++)
            {
                ref SentPacket<TMeta> slot = ref SlotAt(pn);
                if (slot.State != SentPacketState.Outstanding)
                {
                    // Already acknowledged, or declared lost earlier (RFC 9002 removes lost packets; a late ACK is ignored).
                    continue;
                }

                slot.State = SentPacketState.Acked;
                RemoveOutstanding(in slot);
                result.NewlyAckedCount++;
                if (slot.InFlight)
                {
                    result.NewlyAckedInFlightBytes += slot.Size;
                    sampler?.OnPacketDelivered(in slot.Delivery, slot.Size, slot.TimeSentUs, nowUs);
                }

                if (slot.AckEliciting)
                {
                    result.NewlyAckedAckEliciting = true;
                }

                result.LargestNewlyAckedPacketNumber = pn;
                result.LargestNewlyAckedTimeSentUs = slot.TimeSentUs;
                sink.OnPacketAcked(Space, in slot);
            }
        }

        result.LargestAckedIsNewlyAcked = result.LargestNewlyAckedPacketNumber == largest;
        PopResolved();
        return result;
    }

    /// <summary>
    /// Declares outstanding packets at or below the largest acknowledged lost by packet threshold or time threshold,
    /// reports them to <paramref name="sink"/> and recomputes <see cref="LossTimeUs"/>. RFC 9002 §6.1, A.10
    /// DetectAndRemoveLostPackets. Also evaluates persistent congestion over this batch (RFC 9002 §7.6.2).
    /// </summary>
    /// <param name="lossDelayUs">max(kTimeThreshold * max(smoothed_rtt, latest_rtt), kGranularity).</param>
    /// <param name="persistentCongestionDurationUs">(srtt + max(4*rttvar, kGranularity) + max_ack_delay) * 3;
    /// ignored when <paramref name="hasRttSample"/> is false.</param>
    /// <param name="firstRttSampleUs">Only packets sent after this time count toward persistent congestion.</param>
    /// <param name="nowUs">Current time.</param>
    /// <param name="hasRttSample">Whether an RTT sample exists; without one there is no persistent congestion.</param>
    /// <param name="sink">Receives each lost packet.</param>
    /// <param name="sampler">When given, told of each lost in-flight packet other than PMTU probes.</param>
    public LossDetectionResult DetectLostPackets<TSink>(
        long nowUs,
        long lossDelayUs,
        long persistentCongestionDurationUs,
        bool hasRttSample,
        long firstRttSampleUs,
        ref TSink sink,
        IRateSamplingCongestionController? sampler = null)
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        var result = new LossDetectionResult { LargestLostInFlightTimeSentUs = long.MinValue };
        LossTimeUs = RecoveryConstants.NoTime;
        if (LargestAcked < 0 || _count == 0)
        {
            return result;
        }

        long lostSendTime = nowUs - lossDelayUs;
        long end = Math.Min(LargestAcked, _basePn + _count - 1);
        bool inRun = false;
        long runStartUs = 0;
        for (long pn = _basePn; pn <= end; pn++)
        {
            ref SentPacket<TMeta> slot = ref SlotAt(pn);
            if (slot.State == SentPacketState.Acked)
            {
                // §7.6.2: an acknowledgment between two lost packets breaks the congestion period.
                inRun = false;
                continue;
            }

            if (slot.State != SentPacketState.Outstanding)
            {
                continue;
            }

            // §6.1: packet threshold (kPacketThreshold) or time threshold.
            if (slot.TimeSentUs <= lostSendTime || LargestAcked >= pn + RecoveryConstants.PacketThreshold)
            {
                slot.State = SentPacketState.Lost;
                RemoveOutstanding(in slot);
                result.LostCount++;
                if (slot.InFlight)
                {
                    result.LostInFlightBytes += slot.Size;
                    // RFC 9000 §14.4: a lost PMTU probe leaves flight but is no congestion signal.
                    if (!slot.PathProbe)
                    {
                        result.LargestLostInFlightTimeSentUs = Math.Max(result.LargestLostInFlightTimeSentUs, slot.TimeSentUs);
                        sampler?.OnPacketLost(in slot.Delivery, pn, slot.Size, nowUs);
                    }
                }

                if (slot.AckEliciting && !slot.PathProbe && hasRttSample && slot.TimeSentUs > firstRttSampleUs)
                {
                    if (!inRun)
                    {
                        inRun = true;
                        runStartUs = slot.TimeSentUs;
                    }
                    else if (slot.TimeSentUs - runStartUs > persistentCongestionDurationUs)
                    {
                        result.PersistentCongestion = true;
                    }
                }

                sink.OnPacketLost(Space, in slot);
            }
            else
            {
                LossTimeUs = Math.Min(LossTimeUs, slot.TimeSentUs + lossDelayUs);
            }
        }

        PopResolved();
        return result;
    }

    /// <summary>Forgets every outstanding packet when the space's keys are discarded and returns the in-flight bytes
    /// they held, to be removed from the congestion controller. RFC 9002 §6.4, A.11.</summary>
    /// <summary>
    /// After <see cref="DiscardAll"/> for a space whose keys are gone for good: the ring shrinks to one slot, so an idle
    /// connection keeps no storage for its Initial and Handshake spaces (it would grow again if used).
    /// </summary>
    public void ReleaseStorage()
    {
        if (_count != 0) throw new InvalidOperationException("Packets are still tracked.");
        _ring = new SentPacket<TMeta>[1];
        _mask = 0;
        _head = 0;
    }

    public long DiscardAll()
    {
        long bytes = BytesInFlight;
        for (int i = 0; i < _count; i++)
        {
            _ring[(_head + i) & _mask] = default;
        }

        _count = 0;
        _head = 0;
        BytesInFlight = 0;
        AckElicitingInFlight = 0;
        OutstandingCount = 0;
        LossTimeUs = RecoveryConstants.NoTime;
        TimeOfLastAckElicitingUs = 0;
        return bytes;
    }

    /// <summary>
    /// Removes the outstanding packets selected by <paramref name="filter"/> without a congestion signal, reporting them
    /// to <paramref name="sink"/> as lost so their frames can be resent; returns the in-flight bytes removed. For
    /// rejected 0-RTT: RFC 9001 §4.6.2 (the data is resent in 1-RTT packets; the loss says nothing about the path).
    /// </summary>
    public long RemoveWhere<TFilter, TSink>(ref TFilter filter, ref TSink sink)
        where TFilter : ISentPacketFilter<TMeta>, allows ref struct
        where TSink : ISentPacketSink<TMeta>, allows ref struct
    {
        long bytes = 0;
        for (int i = 0; i < _count; i++)
        {
            ref SentPacket<TMeta> slot = ref _ring[(_head + i) & _mask];
            if (slot.State != SentPacketState.Outstanding || !filter.Matches(in slot))
            {
                continue;
            }

            // Lost, not Acked: a removed packet must not break a persistent-congestion run as an acknowledgment would.
            slot.State = SentPacketState.Lost;
            RemoveOutstanding(in slot);
            if (slot.InFlight)
            {
                bytes += slot.Size;
            }

            sink.OnPacketLost(Space, in slot);
        }

        // A stale loss time is harmless (the next detection pass recomputes it); none is needed with nothing left.
        if (OutstandingCount == 0)
        {
            LossTimeUs = RecoveryConstants.NoTime;
        }

        PopResolved();
        return bytes;
    }

    /// <summary>Walks outstanding packets from the oldest.</summary>
    public void VisitOutstanding<TVisitor>(ref TVisitor visitor)
        where TVisitor : ISentPacketVisitor<TMeta>, allows ref struct
    {
        for (int i = 0; i < _count; i++)
        {
            ref SentPacket<TMeta> slot = ref _ring[(_head + i) & _mask];
            if (slot.State == SentPacketState.Outstanding && !visitor.Visit(in slot))
            {
                return;
            }
        }
    }

    /// <summary>Looks up an outstanding packet.</summary>
    public bool TryGetOutstanding(long packetNumber, out SentPacket<TMeta> packet)
    {
        if (packetNumber >= _basePn && packetNumber < _basePn + _count)
        {
            packet = SlotAt(packetNumber);
            return packet.State == SentPacketState.Outstanding;
        }

        packet = default;
        return false;
    }

    private static AckProcessingResult Fail(ref AckProcessingResult result, TransportErrorCode code, string reason)
    {
        result.Error = code;
        result.Reason = reason;
        return result;
    }

    private static bool RangesContain(ReadOnlySpan<AckRange> ranges, long pn)
    {
        for (int i = 0; i < ranges.Length; i++)
        {
            if (ranges[i].Contains(pn))
            {
                return true;
            }
        }

        return false;
    }

    private ref SentPacket<TMeta> SlotAt(long pn) => ref _ring[(_head + (int)(pn - _basePn)) & _mask];

    private void RemoveOutstanding(in SentPacket<TMeta> slot)
    {
        OutstandingCount--;
        if (slot.InFlight)
        {
            BytesInFlight -= slot.Size;
            if (slot.AckEliciting)
            {
                AckElicitingInFlight--;
            }
        }
    }

    private void RememberSkipped(long pn)
    {
        _skipped[_skippedNext] = pn;
        _skippedNext = (_skippedNext + 1) % SkippedHistory;
        if (_skippedCount < SkippedHistory)
        {
            _skippedCount++;
        }
    }

    private void PopResolved()
    {
        while (_count > 0 && _ring[_head].State != SentPacketState.Outstanding)
        {
            _ring[_head] = default;
            _head = (_head + 1) & _mask;
            _basePn++;
            _count--;
        }
    }

    private void EnsureCapacity(int needed)
    {
        if (needed <= _ring.Length)
        {
            return;
        }

        int capacity = _ring.Length;
        while (capacity < needed)
        {
            capacity <<= 1;
        }

        var grown = new SentPacket<TMeta>[capacity];
        for (int i = 0; i < _count; i++)
        {
            grown[i] = _ring[(_head + i) & _mask];
        }

        _ring = grown;
        _mask = capacity - 1;
        _head = 0;
    }
}
