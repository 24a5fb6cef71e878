using System.Buffers;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>
/// The impairment core for one direction of the link: drop-tail queue at a token-rate bottleneck, loss (Bernoulli or
/// Gilbert-Elliott), fixed delay plus jitter, and reordering. Pure: time is passed in as microseconds and every random
/// draw comes from the <see cref="Random"/> given to the constructor, so a seed fixes the whole schedule.
/// Packets wait in one priority queue keyed by (release time, arrival sequence); the caller asks for the next release
/// time and sleeps until then, so no timer per packet exists.
/// </summary>
internal sealed class LinkDirection
{
    private readonly ImpairmentOptions _options;
    private readonly Random _random;
    private readonly PriorityQueue<EmulatedPacket, (long ReleaseUs, long Sequence)> _queue = new();
    private readonly Stack<EmulatedPacket> _packetPool = new();
    private long _sequence;

    // Time (fractional microseconds) at which the bottleneck finishes serializing everything accepted so far.
    private double _linkFreeUs;

    // Release time of the last in-order packet: jitter must not reorder (reordering is its own impairment).
    private long _lastOrderedReleaseUs = long.MinValue;

    private bool _burstBad;

    public LinkDirection(ImpairmentOptions options, Random random)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(random);
        _options = options;
        _random = random;
    }

    public DirectionCounters Counters { get; } = new();

    public int QueuedPackets => _queue.Count;

    /// <summary>The earliest release time of a queued packet, or <see cref="long.MaxValue"/> when none is queued.</summary>
    public long NextReleaseUs => _queue.TryPeek(out _, out (long ReleaseUs, long Sequence) key) ? key.ReleaseUs : long.MaxValue;

    /// <summary>Bytes accepted at the bottleneck and not yet serialized at <paramref name="nowUs"/>.</summary>
    public long BacklogBytes(long nowUs)
    {
        if (_options.RateBitsPerSecond <= 0 || _linkFreeUs <= nowUs)
        {
            return 0;
        }

        return (long)Math.Ceiling((_linkFreeUs - nowUs) * _options.RateBitsPerSecond / 8_000_000.0);
    }

    /// <summary>Offers a packet that arrived at <paramref name="nowUs"/>; copies it if it is scheduled.</summary>
    public PacketFate Submit(ReadOnlySpan<byte> packet, long nowUs)
    {
        if (packet.IsEmpty)
        {
            return PacketFate.DroppedEmpty;
        }

        DirectionCounters c = Counters;
        c.PacketsIn++;
        c.BytesIn += packet.Length;

        // The bottleneck queue comes first (as at a router egress): a packet that does not fit is dropped at the tail
        // and uses no link time.
        double departUs = nowUs;
        if (_options.RateBitsPerSecond > 0)
        {
            long backlog = BacklogBytes(nowUs);
            if (backlog + packet.Length > _options.QueueLimitBytes)
            {
                c.DroppedQueueFull++;
                return PacketFate.DroppedQueueFull;
            }

            if (backlog + packet.Length > c.MaxQueueBytes)
            {
                c.MaxQueueBytes = backlog + packet.Length;
            }

            double startUs = Math.Max(_linkFreeUs, nowUs);
            _linkFreeUs = startUs + packet.Length * 8_000_000.0 / _options.RateBitsPerSecond;
            departUs = _linkFreeUs;
        }

        // Loss on the wire after the bottleneck: a lost packet still used its serialization time.
        if (_options.BurstLossEnabled)
        {
            // Gilbert-Elliott: one state transition per packet, then loss with the probability of the new state.
            _burstBad = _burstBad ? _random.NextDouble() >= _options.BurstBadToGood : _random.NextDouble() < _options.BurstGoodToBad;
            double p = _burstBad ? _options.BurstLossInBad : _options.BurstLossInGood;
            if (_random.NextDouble() < p)
            {
                if (_burstBad)
                {
                    c.DroppedBurstLoss++;
                    return PacketFate.DroppedBurstLoss;
                }

                c.DroppedLoss++;
                return PacketFate.DroppedLoss;
            }
        }
        else if (_options.LossProbability > 0 && _random.NextDouble() < _options.LossProbability)
        {
            c.DroppedLoss++;
            return PacketFate.DroppedLoss;
        }

        long delayUs = _options.DelayUs;
        if (_options.JitterUs > 0)
        {
            delayUs += (long)Math.Round((_random.NextDouble() * 2.0 - 1.0) * _options.JitterUs);
            if (delayUs < 0)
            {
                delayUs = 0;
            }
        }

        long releaseUs = (long)Math.Ceiling(departUs) + delayUs;
        if (_options.ReorderProbability > 0 && _random.NextDouble() < _options.ReorderProbability)
        {
            // Held out of the in-order chain so that packets arriving within the gap overtake it.
            releaseUs += _options.ReorderGapUs;
            c.Reordered++;
        }
        else
        {
            if (releaseUs < _lastOrderedReleaseUs)
            {
                releaseUs = _lastOrderedReleaseUs;
            }

            _lastOrderedReleaseUs = releaseUs;
        }

        if (releaseUs > nowUs)
        {
            c.Delayed++;
        }

        EmulatedPacket p2 = _packetPool.Count > 0 ? _packetPool.Pop() : new EmulatedPacket();
        if (p2.Buffer.Length < packet.Length)
        {
            if (p2.Buffer.Length > 0)
            {
                ArrayPool<byte>.Shared.Return(p2.Buffer);
            }

            p2.Buffer = ArrayPool<byte>.Shared.Rent(Math.Max(packet.Length, 2048));
        }

        packet.CopyTo(p2.Buffer);
        p2.Length = packet.Length;
        p2.ArrivalUs = nowUs;
        p2.ReleaseUs = releaseUs;
        _queue.Enqueue(p2, (releaseUs, _sequence++));
        return PacketFate.Scheduled;
    }

    /// <summary>Copies out the next packet due at <paramref name="nowUs"/>, if any.</summary>
    public bool TryRelease(long nowUs, Span<byte> destination, out int length)
    {
        if (!_queue.TryPeek(out EmulatedPacket? packet, out (long ReleaseUs, long Sequence) key) || key.ReleaseUs > nowUs)
        {
            length = 0;
            return false;
        }

        _queue.Dequeue();
        if (packet.Length > destination.Length)
        {
            throw new ArgumentException("Destination is smaller than the queued packet.", nameof(destination));
        }

        packet.Buffer.AsSpan(0, packet.Length).CopyTo(destination);
        length = packet.Length;
        Counters.PacketsForwarded++;
        Counters.BytesForwarded += packet.Length;
        Counters.DelaySumUs += packet.ReleaseUs - packet.ArrivalUs;
        long lateUs = nowUs - packet.ReleaseUs;
        Counters.LatenessSumUs += lateUs;
        if (lateUs > Counters.MaxLatenessUs)
        {
            Counters.MaxLatenessUs = lateUs;
        }
        _packetPool.Push(packet);
        return true;
    }

    /// <summary>The caller could not deliver a released packet (the TUN write failed): count it as a drop instead.</summary>
    public void RecordWriteFailure(int length)
    {
        Counters.PacketsForwarded--;
        Counters.BytesForwarded -= length;
        Counters.DroppedWriteError++;
    }
}
