namespace System.Net.Quic.Managed.Wire;

/// <summary>MAX_STREAM_DATA. RFC 9000 §19.10.</summary>
internal readonly record struct MaxStreamDataFrame(ulong StreamId, ulong MaximumStreamData)
{
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, out MaxStreamDataFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong streamId) & reader.TryReadVarInt(out ulong value);
        frame = new MaxStreamDataFrame(streamId, value);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    /// <summary>The encoded length with the largest stream id and maximum: room that always suffices for this frame.</summary>
    public const int MaxEncodedLength = 1 + (2 * VariableLengthInteger.MaxLength);

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(StreamId) + VariableLengthInteger.GetEncodedLength(MaximumStreamData);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.MaxStreamData) || !w.TryWriteVarInt(StreamId) || !w.TryWriteVarInt(MaximumStreamData))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
