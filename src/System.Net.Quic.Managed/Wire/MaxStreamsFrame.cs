namespace System.Net.Quic.Managed.Wire;

/// <summary>MAX_STREAMS (bidirectional 0x12, unidirectional 0x13). RFC 9000 §19.11.</summary>
internal readonly record struct MaxStreamsFrame(bool Bidirectional, ulong MaximumStreams)
{
    /// <summary>A stream count cannot exceed 2^60, or stream IDs (count * 4) would overflow a varint.</summary>
    public const ulong MaxStreamCount = 1UL << 60;

    /// <summary>Reads the body; a count above 2^60 is a FRAME_ENCODING_ERROR (RFC 9000 §19.11).</summary>
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, FrameType type, out MaxStreamsFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong value);
        frame = new MaxStreamsFrame(type == (FrameType)0x12, value);
        return ok && value <= MaxStreamCount ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    /// <summary>The encoded length with the largest maximum: room that always suffices for this frame.</summary>
    public const int MaxEncodedLength = 1 + VariableLengthInteger.MaxLength;

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(MaximumStreams);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (MaximumStreams > MaxStreamCount || !w.TryWriteByte(Bidirectional ? (byte)0x12 : (byte)0x13) || !w.TryWriteVarInt(MaximumStreams))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
