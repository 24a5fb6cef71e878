using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Acknowledgment state of one packet number space on the receiving side. RFC 9000 §13.2. Keeps at most a fixed
/// number of disjoint ranges (largest first), detects duplicates, and decides when an ACK frame is due.
/// </summary>
internal sealed class ReceivedPacketTracker
{
    /// <summary>RFC 9000 §13.2.2: acknowledge at least every second ack-eliciting packet.</summary>
    public const int AckElicitingThreshold = 2;

    /// <summary>ACK decimation (as Chromium's QUIC does it) starts after this many ack-eliciting packets in the
    /// application space; before that every second one is acknowledged, so slow start gets its feedback.</summary>
    public const int DecimationAfterPackets = 100;

    /// <summary>Most ack-eliciting packets one ACK may wait for while decimating.</summary>
    public const int MaxDecimatedThreshold = 32;

    private AckRange[] _ranges; // descending: _ranges[0] holds the largest packet numbers; grows up to _maxRanges
    private readonly int _maxRanges;
    private int _rangeCount;
    private readonly long _maxAckDelayUs;
    private readonly bool _alwaysAckImmediately;
    private readonly bool _decimate;

    // ACK decimation: ack-eliciting packets received in all, and in the current round-trip window.
    private long _ackElicitingTotal;
    private long _windowStartUs;
    private int _windowPackets;
    private int _decimatedThreshold = AckElicitingThreshold;

    // Packet numbers below this are treated as duplicates: their ranges were pruned or dropped. RFC 9000 §13.2.3.
    private long _ignoreBelow;

    // decimate: in the application space, acknowledge bulk data less often than every second packet once
    // DecimationAfterPackets have arrived (the rule is on OnPacketReceived).
    /// <summary>Ranges the tracker starts with; it grows up to the maximum it was given.</summary>
    internal const int InitialRanges = 4;

    public ReceivedPacketTracker(PacketNumberSpace space, long maxAckDelayUs = RecoveryConstants.DefaultMaxAckDelayUs, int maxRanges = 32, bool decimate = false)
    {
        if (maxRanges < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(maxRanges));
        }

        Space = space;
        // A few ranges to start with (an idle connection keeps this array), doubled when packets arrive out of order.
        _maxRanges = maxRanges;
        _ranges = new AckRange[Math.Min(maxRanges, InitialRanges)];
        _maxAckDelayUs = maxAckDelayUs;
        // RFC 9000 §13.2.1: Initial and Handshake packets are acknowledged without delay.
        _alwaysAckImmediately = space != PacketNumberSpace.ApplicationData;
        _decimate = decimate && !_alwaysAckImmediately;
    }

    public PacketNumberSpace Space { get; }

    /// <summary>Largest packet number received, -1 before the first.</summary>
    public long LargestReceived { get; private set; } = -1;

    /// <summary>When the largest packet number was received; the ACK Delay field is measured from it. RFC 9000 §13.2.5.</summary>
    public long LargestReceivedTimeUs { get; private set; }

    /// <summary>Largest ack-eliciting packet number received, -1 before the first.</summary>
    public long LargestAckElicitingReceived { get; private set; } = -1;

    /// <summary>Ack-eliciting packets received since the last ACK frame was sent.</summary>
    public int AckElicitingSinceLastAck { get; private set; }

    /// <summary>Something was received since the last ACK frame was sent (an ACK may be piggybacked).</summary>
    public bool HasNewPacketsToAck { get; private set; }

    /// <summary>An ACK frame must be sent without waiting. RFC 9000 §13.2.1.</summary>
    public bool AckImmediately { get; private set; }

    /// <summary>When the delayed ACK is due; <see cref="RecoveryConstants.NoTime"/> when no ACK is owed.
    /// Equals the receive time when the ACK is due immediately.</summary>
    public long AckDeadlineUs { get; private set; } = RecoveryConstants.NoTime;

    /// <summary>ECN counts of packets received in this space. RFC 9000 §13.4.1.</summary>
    public EcnCounts EcnCounts => _ecn;

    public int RangeCount => _rangeCount;

    private EcnCounts _ecn;

    /// <summary>Ack-eliciting packets an ACK waits for now: 2 (RFC 9000 §13.2.2), or while decimating a quarter of
    /// those that arrived in the last round trip, from 2 to <see cref="MaxDecimatedThreshold"/>.</summary>
    public int CurrentThreshold => _ackElicitingTotal > DecimationAfterPackets ? _decimatedThreshold : AckElicitingThreshold;

    /// <summary>
    /// Records a received packet (after successful decryption). Returns false for a duplicate, which the caller must drop
    /// without processing its frames. RFC 9000 §12.3, §13.2.
    /// <para>With decimation on, after <see cref="DecimationAfterPackets"/> ack-eliciting packets an ACK is owed after
    /// <see cref="CurrentThreshold"/> of them or a quarter of <paramref name="rttUs"/> (at least the timer granularity,
    /// at most max_ack_delay), whichever comes first. A sender whose congestion window is full thus still gets about
    /// four ACKs per round trip, and a fast one gets one per run of up to 32 packets instead of one per two (RFC 9000
    /// §13.2.2 allows fewer ACKs when the receiver knows how often the sender needs them). Out-of-order and CE-marked
    /// packets are still acknowledged at once.</para>
    /// </summary>
    public bool OnPacketReceived(long packetNumber, bool ackEliciting, long nowUs, EcnCodepoint ecn = EcnCodepoint.NotEct, long rttUs = 0)
    {
        if (packetNumber < _ignoreBelow || packetNumber < 0 || Contains(packetNumber))
        {
            return false;
        }

        int rangeIndex = Insert(packetNumber);
        if (packetNumber > LargestReceived)
        {
            LargestReceived = packetNumber;
            LargestReceivedTimeUs = nowUs;
        }

        switch (ecn)
        {
            case EcnCodepoint.Ect0: _ecn.Ect0++; break;
            case EcnCodepoint.Ect1: _ecn.Ect1++; break;
            case EcnCodepoint.Ce: _ecn.Ce++; break;
        }

        HasNewPacketsToAck = true;
        if (!ackEliciting)
        {
            // RFC 9000 §13.2.1: non-ack-eliciting packets are acknowledged only along with others.
            return true;
        }

        AckElicitingSinceLastAck++;
        long delayUs = _maxAckDelayUs;
        int threshold = AckElicitingThreshold;
        if (_decimate && ++_ackElicitingTotal > DecimationAfterPackets)
        {
            CountForDecimation(nowUs, rttUs);
            threshold = _decimatedThreshold;
            delayUs = Math.Min(_maxAckDelayUs, Math.Max(RecoveryConstants.GranularityUs, rttUs / 4));
        }

        bool immediate = _alwaysAckImmediately
            || AckElicitingSinceLastAck >= threshold
            // §13.2.1: below a previously received ack-eliciting packet, or above the largest one with packets missing
            // in between.
            || packetNumber < LargestAckElicitingReceived
            || (LargestAckElicitingReceived >= 0 && packetNumber > LargestAckElicitingReceived && rangeIndex >= 0
                && MissingBelow(rangeIndex, LargestAckElicitingReceived))
            // §13.2.1: CE-marked packets are acknowledged immediately to shorten the congestion response.
            || ecn == EcnCodepoint.Ce;

        if (packetNumber > LargestAckElicitingReceived)
        {
            LargestAckElicitingReceived = packetNumber;
        }

        if (immediate)
        {
            AckImmediately = true;
            AckDeadlineUs = Math.Min(AckDeadlineUs, nowUs);
        }
        else
        {
            // §13.2.1: delay by no more than max_ack_delay.
            AckDeadlineUs = Math.Min(AckDeadlineUs, nowUs + delayUs);
        }

        return true;
    }

    // Counts packets per round trip; at the end of each window the threshold becomes a quarter of its count.
    private void CountForDecimation(long nowUs, long rttUs)
    {
        _windowPackets++;
        if (rttUs <= 0 || nowUs - _windowStartUs < rttUs) return;
        _decimatedThreshold = Math.Clamp(_windowPackets / 4, AckElicitingThreshold, MaxDecimatedThreshold);
        _windowStartUs = nowUs;
        _windowPackets = 0;
    }

    /// <summary>True for a packet number already received or too old to track: the packet must be dropped (RFC 9000 §12.3).</summary>
    public bool IsDuplicate(long packetNumber) => packetNumber < _ignoreBelow || packetNumber < 0 || Contains(packetNumber);

    /// <summary>An ACK is due at <paramref name="nowUs"/>.</summary>
    public bool ShouldSendAck(long nowUs) => AckImmediately || AckDeadlineUs <= nowUs;

    /// <summary>ACK Delay to report: time since the largest packet was received (unscaled microseconds).</summary>
    public long GetAckDelayUs(long nowUs) => Math.Max(0, nowUs - LargestReceivedTimeUs);

    /// <summary>Copies the ranges, largest first, into <paramref name="destination"/>; returns how many were written
    /// (the most recent ones when the span is short).</summary>
    public int WriteAckRanges(Span<AckRange> destination)
    {
        int n = Math.Min(destination.Length, _rangeCount);
        _ranges.AsSpan(0, n).CopyTo(destination);
        return n;
    }

    /// <summary>The caller sent an ACK frame built from the current ranges.</summary>
    public void OnAckSent()
    {
        AckElicitingSinceLastAck = 0;
        AckImmediately = false;
        HasNewPacketsToAck = false;
        AckDeadlineUs = RecoveryConstants.NoTime;
    }

    /// <summary>A packet carrying our ACK frame with Largest Acknowledged = <paramref name="largestAckedInOurAck"/> was
    /// acknowledged: stop acknowledging packets at or below it. RFC 9000 §13.2.4.</summary>
    public void OnAckOfAck(long largestAckedInOurAck)
    {
        long floor = largestAckedInOurAck + 1;
        if (floor <= _ignoreBelow)
        {
            return;
        }

        _ignoreBelow = floor;
        int keep = 0;
        while (keep < _rangeCount && _ranges[keep].Largest >= floor)
        {
            if (_ranges[keep].Smallest < floor)
            {
                _ranges[keep] = new AckRange(floor, _ranges[keep].Largest);
            }

            keep++;
        }

        _rangeCount = keep;
    }

    /// <summary>Forgets everything (the space's keys were discarded) and gives its range storage back to the GC: nothing
    /// is received in a discarded space again, and an idle connection should not keep two dead spaces' arrays.</summary>
    public void Discard()
    {
        _rangeCount = 0;
        _ranges = [default];
        OnAckSent();
    }

    // Packets are missing between the range at rangeIndex and `below` (a received packet number): the range does not
    // reach down to it. A range cut at the pruning floor may hide whether packets were missing; assume not.
    private bool MissingBelow(int rangeIndex, long below)
    {
        long smallest = _ranges[rangeIndex].Smallest;
        return smallest > below && smallest > _ignoreBelow;
    }

    private bool Contains(long pn)
    {
        for (int i = 0; i < _rangeCount; i++)
        {
            AckRange r = _ranges[i];
            if (pn > r.Largest)
            {
                return false;
            }

            if (pn >= r.Smallest)
            {
                return true;
            }
        }

        return false;
    }

    // Returns the index of the range now holding pn, or -1 when pn was too old to keep.
    private int Insert(long pn)
    {
        // Find the first range (descending) whose Smallest is <= pn + 1: pn merges into it or goes just before it.
        int i = 0;
        while (i < _rangeCount && _ranges[i].Smallest > pn + 1)
        {
            i++;
        }

        if (i < _rangeCount && _ranges[i].Largest + 1 >= pn)
        {
            // Adjacent to or touching range i (pn itself is not contained: duplicates were rejected).
            AckRange r = _ranges[i];
            r = new AckRange(Math.Min(r.Smallest, pn), Math.Max(r.Largest, pn));
            _ranges[i] = r;
            // pn == previous range's Smallest - 1 was handled by the loop condition (that range has Smallest <= pn+1
            // only if it is range i). Merge with the next lower range when they now touch.
            if (i + 1 < _rangeCount && _ranges[i + 1].Largest + 1 >= r.Smallest)
            {
                _ranges[i] = new AckRange(_ranges[i + 1].Smallest, r.Largest);
                Array.Copy(_ranges, i + 2, _ranges, i + 1, _rangeCount - i - 2);
                _rangeCount--;
            }

            return i;
        }

        // New range at position i.
        if (_rangeCount == _ranges.Length && _ranges.Length < _maxRanges)
        {
            Array.Resize(ref _ranges, Math.Min(_maxRanges, _ranges.Length * 2));
        }

        if (_rangeCount == _ranges.Length)
        {
            if (i == _rangeCount)
            {
                // Older than every kept range: forget it (the range bound wins) and treat it as old.
                _ignoreBelow = Math.Max(_ignoreBelow, pn + 1);
                return -1;
            }

            // Drop the oldest range; packets at or below it count as duplicates from now on.
            _ignoreBelow = Math.Max(_ignoreBelow, _ranges[_rangeCount - 1].Largest + 1);
            _rangeCount--;
        }

        Array.Copy(_ranges, i, _ranges, i + 1, _rangeCount - i);
        _ranges[i] = new AckRange(pn, pn);
        _rangeCount++;
        return i;
    }
}
