namespace System.Net.Quic.Managed.Wire;

/// <summary>Walks the QUIC packets coalesced in one UDP datagram without allocating. RFC 9000 §12.2.</summary>
/// <remarks>Initial, 0-RTT and Handshake packets end where their Length field says; any other packet (short header,
/// Retry, Version Negotiation, unknown version) takes the rest of the datagram. A malformed long header ends the walk
/// and sets <see cref="StoppedOnMalformedPacket"/>: the remaining bytes cannot be delimited. Checking that every
/// packet has the first one's Destination Connection ID (§12.2) is left to the connection.</remarks>
internal ref struct CoalescedPacketEnumerator
{
    private readonly ReadOnlySpan<byte> _datagram;
    private readonly bool _allowGreasedFixedBit;
    private int _next;

    public CoalescedPacketEnumerator(ReadOnlySpan<byte> datagram, bool allowGreasedFixedBit = false)
    {
        _datagram = datagram;
        _allowGreasedFixedBit = allowGreasedFixedBit;
        _next = 0;
        Current = default;
        CurrentOffset = 0;
        StoppedOnMalformedPacket = false;
    }

    /// <summary>The current packet's bytes.</summary>
    public ReadOnlySpan<byte> Current { get; private set; }

    /// <summary>Offset of <see cref="Current"/> within the datagram.</summary>
    public int CurrentOffset { get; private set; }

    /// <summary>True when the walk ended at bytes that do not form a long header packet.</summary>
    public bool StoppedOnMalformedPacket { get; private set; }

    public readonly CoalescedPacketEnumerator GetEnumerator() => this;

    public bool MoveNext()
    {
        if (_next >= _datagram.Length || StoppedOnMalformedPacket)
        {
            Current = default;
            return false;
        }

        ReadOnlySpan<byte> rest = _datagram.Slice(_next);
        int length;
        if (!PacketFirstByte.IsLongHeader(rest[0]))
        {
            length = rest.Length;
        }
        else if (LongHeader.TryParse(rest, out LongHeader header, _allowGreasedFixedBit))
        {
            length = header.TotalLength;
        }
        else
        {
            StoppedOnMalformedPacket = true;
            Current = default;
            return false;
        }

        Current = rest.Slice(0, length);
        CurrentOffset = _next;
        // A zero-length Length field still consumes the header, so the walk always advances.
        _next += length;
        return true;
    }
}
