namespace System.Net.Quic.Managed.Wire;

/// <summary>An ACK frame (0x02, or 0x03 with ECN counts). RFC 9000 §19.3. The additional ranges stay encoded in the
/// packet and are decoded lazily by <see cref="AckRangeEnumerator"/>; <see cref="TryRead"/> has already validated all
/// of them, so enumeration cannot fail.</summary>
internal readonly ref struct AckFrame
{
    private readonly ReadOnlySpan<byte> _additionalRanges;

    private AckFrame(ulong largest, ulong ackDelay, ulong firstRange, int additionalRangeCount, ReadOnlySpan<byte> additionalRanges, EcnCounts? ecn)
    {
        LargestAcknowledged = largest;
        AckDelay = ackDelay;
        FirstAckRange = firstRange;
        AdditionalRangeCount = additionalRangeCount;
        _additionalRanges = additionalRanges;
        EcnCounts = ecn;
    }

    public ulong LargestAcknowledged { get; }

    /// <summary>The encoded ACK Delay: multiply by 2^ack_delay_exponent for microseconds. RFC 9000 §19.3.</summary>
    public ulong AckDelay { get; }

    public ulong FirstAckRange { get; }

    /// <summary>The ACK Delay in microseconds for the peer's ack_delay_exponent, saturating rather than overflowing on
    /// hostile values. RFC 9000 §19.3.</summary>
    public ulong GetAckDelayUs(int ackDelayExponent) =>
        AckDelay > (ulong.MaxValue >> ackDelayExponent) ? ulong.MaxValue : AckDelay << ackDelayExponent;

    /// <summary>The ACK Delay field value for a delay in microseconds and our ack_delay_exponent. RFC 9000 §19.3.</summary>
    public static ulong EncodeAckDelay(long delayUs, int ackDelayExponent) => delayUs <= 0 ? 0 : (ulong)delayUs >> ackDelayExponent;

    /// <summary>The ACK Range Count field: ranges after the first.</summary>
    public int AdditionalRangeCount { get; }

    /// <summary>Total ranges, including the first.</summary>
    public int RangeCount => AdditionalRangeCount + 1;

    /// <summary>Present for type 0x03.</summary>
    public EcnCounts? EcnCounts { get; }

    /// <summary>The acknowledged ranges, largest first.</summary>
    public AckRangeEnumerator Ranges => new(LargestAcknowledged, FirstAckRange, _additionalRanges);

    /// <summary>The smallest packet number acknowledged by this frame.</summary>
    public long SmallestAcknowledged
    {
        get
        {
            long smallest = 0;
            foreach (AckRange range in Ranges)
            {
                smallest = range.Smallest;
            }

            return smallest;
        }
    }

    /// <summary>Copies up to <paramref name="destination"/>.Length ranges (largest first); returns how many.</summary>
    public int CopyRangesTo(Span<AckRange> destination)
    {
        int count = 0;
        foreach (AckRange range in Ranges)
        {
            if (count == destination.Length)
            {
                break;
            }

            destination[count++] = range;
        }

        return count;
    }

    /// <summary>Reads an ACK frame body. Every range is checked: a range or gap reaching below packet number 0 is a
    /// FRAME_ENCODING_ERROR (RFC 9000 §19.3.1), as is any truncation.</summary>
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, FrameType type, out AckFrame frame)
    {
        frame = default;
        if (!reader.TryReadVarInt(out ulong largest) || !reader.TryReadVarInt(out ulong ackDelay) ||
            !reader.TryReadVarInt(out ulong rangeCount) || !reader.TryReadVarInt(out ulong firstRange) ||
            firstRange > largest)
        {
            return TransportErrorCode.FrameEncodingError;
        }

        // Each additional range takes at least two bytes, so the count is bounded by the input before it is used.
        if (rangeCount > (ulong)reader.Remaining / 2)
        {
            return TransportErrorCode.FrameEncodingError;
        }

        int rangesStart = reader.Position;
        ulong smallest = largest - firstRange;
        for (ulong i = 0; i < rangeCount; i++)
        {
            // RFC 9000 §19.3.1: largest = previous smallest - gap - 2; smallest = largest - range length.
            if (!reader.TryReadVarInt(out ulong gap) || !reader.TryReadVarInt(out ulong length) ||
                smallest < 2 || gap > smallest - 2)
            {
                return TransportErrorCode.FrameEncodingError;
            }

            ulong rangeLargest = smallest - gap - 2;
            if (length > rangeLargest)
            {
                return TransportErrorCode.FrameEncodingError;
            }

            smallest = rangeLargest - length;
        }

        ReadOnlySpan<byte> ranges = reader.Buffer.Slice(rangesStart, reader.Position - rangesStart);
        EcnCounts? ecn = null;
        if (type == FrameType.AckEcn)
        {
            if (!reader.TryReadVarInt(out ulong ect0) || !reader.TryReadVarInt(out ulong ect1) || !reader.TryReadVarInt(out ulong ce))
            {
                return TransportErrorCode.FrameEncodingError;
            }

            ecn = new EcnCounts((long)ect0, (long)ect1, (long)ce);
        }

        frame = new AckFrame(largest, ackDelay, firstRange, (int)rangeCount, ranges, ecn);
        return TransportErrorCode.NoError;
    }

    /// <summary>Encoded length of this frame as parsed, type included.</summary>
    public int EncodedLength =>
        1 + VariableLengthInteger.GetEncodedLength(LargestAcknowledged) + VariableLengthInteger.GetEncodedLength(AckDelay) +
        VariableLengthInteger.GetEncodedLength((ulong)AdditionalRangeCount) + VariableLengthInteger.GetEncodedLength(FirstAckRange) +
        _additionalRanges.Length + GetEcnLength(EcnCounts);

    /// <summary>Re-encodes this frame as parsed.</summary>
    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)(EcnCounts.HasValue ? FrameType.AckEcn : FrameType.Ack)) ||
            !w.TryWriteVarInt(LargestAcknowledged) || !w.TryWriteVarInt(AckDelay) ||
            !w.TryWriteVarInt((ulong)AdditionalRangeCount) || !w.TryWriteVarInt(FirstAckRange) ||
            !w.TryWriteBytes(_additionalRanges) || !TryWriteEcn(ref w, EcnCounts))
        {
            return false;
        }

        writer = w;
        return true;
    }

    /// <summary>Encoded length of an ACK frame for <paramref name="ranges"/> (largest first, disjoint, non-adjacent),
    /// or -1 when the ranges are not in that form.</summary>
    public static int GetEncodedLength(scoped ReadOnlySpan<AckRange> ranges, ulong ackDelay, EcnCounts? ecnCounts = null)
    {
        if (!AreWellFormed(ranges) || ackDelay > VariableLengthInteger.MaxValue)
        {
            return -1;
        }

        int length = 1 + VariableLengthInteger.GetEncodedLength((ulong)ranges[0].Largest) + VariableLengthInteger.GetEncodedLength(ackDelay) +
            VariableLengthInteger.GetEncodedLength((ulong)(ranges.Length - 1)) +
            VariableLengthInteger.GetEncodedLength((ulong)(ranges[0].Largest - ranges[0].Smallest));
        for (int i = 1; i < ranges.Length; i++)
        {
            length += VariableLengthInteger.GetEncodedLength((ulong)(ranges[i - 1].Smallest - ranges[i].Largest - 2));
            length += VariableLengthInteger.GetEncodedLength((ulong)(ranges[i].Largest - ranges[i].Smallest));
        }

        return length + GetEcnLength(ecnCounts);
    }

    /// <summary>Writes an ACK frame (0x03 when <paramref name="ecnCounts"/> is given). <paramref name="ranges"/> must be
    /// largest first with at least one unacknowledged packet between neighbours. Writes nothing on failure.</summary>
    public static bool TryWrite(ref QuicWriter writer, scoped ReadOnlySpan<AckRange> ranges, ulong ackDelay, EcnCounts? ecnCounts = null)
    {
        int length = GetEncodedLength(ranges, ackDelay, ecnCounts);
        if (length < 0 || length > writer.Remaining)
        {
            return false;
        }

        QuicWriter w = writer;
        w.TryWriteByte((byte)(ecnCounts.HasValue ? FrameType.AckEcn : FrameType.Ack));
        w.TryWriteVarInt((ulong)ranges[0].Largest);
        w.TryWriteVarInt(ackDelay);
        w.TryWriteVarInt((ulong)(ranges.Length - 1));
        w.TryWriteVarInt((ulong)(ranges[0].Largest - ranges[0].Smallest));
        for (int i = 1; i < ranges.Length; i++)
        {
            w.TryWriteVarInt((ulong)(ranges[i - 1].Smallest - ranges[i].Largest - 2));
            w.TryWriteVarInt((ulong)(ranges[i].Largest - ranges[i].Smallest));
        }

        if (!TryWriteEcn(ref w, ecnCounts))
        {
            return false;
        }

        writer = w;
        return true;
    }

    private static bool AreWellFormed(ReadOnlySpan<AckRange> ranges)
    {
        if (ranges.IsEmpty || (ulong)ranges[0].Largest > VariableLengthInteger.MaxValue)
        {
            return false;
        }

        for (int i = 0; i < ranges.Length; i++)
        {
            if (ranges[i].Smallest < 0 || ranges[i].Smallest > ranges[i].Largest)
            {
                return false;
            }

            // A gap field encodes (previous smallest - largest - 2), so neighbours need a hole of at least one packet.
            if (i > 0 && (ranges[i - 1].Smallest < 2 || ranges[i].Largest > ranges[i - 1].Smallest - 2))
            {
                return false;
            }
        }

        return true;
    }

    private static int GetEcnLength(EcnCounts? ecn) => ecn is { } e
        ? VariableLengthInteger.GetEncodedLength((ulong)e.Ect0) + VariableLengthInteger.GetEncodedLength((ulong)e.Ect1) + VariableLengthInteger.GetEncodedLength((ulong)e.Ce)
        : 0;

    private static bool TryWriteEcn(ref QuicWriter writer, EcnCounts? ecn) =>
        ecn is not { } e || (writer.TryWriteVarInt((ulong)e.Ect0) && writer.TryWriteVarInt((ulong)e.Ect1) && writer.TryWriteVarInt((ulong)e.Ce));
}
