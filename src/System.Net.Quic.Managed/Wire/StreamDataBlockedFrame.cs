namespace System.Net.Quic.Managed.Wire;

/// <summary>STREAM_DATA_BLOCKED: the stream-level limit at which the sender is blocked. RFC 9000 §19.13.</summary>
internal readonly record struct StreamDataBlockedFrame(ulong StreamId, ulong MaximumStreamData)
{
    public static TransportErrorCode TryRead(ref QuicReader reader, out StreamDataBlockedFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong streamId) & reader.TryReadVarInt(out ulong value);
        frame = new StreamDataBlockedFrame(streamId, value);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(StreamId) + VariableLengthInteger.GetEncodedLength(MaximumStreamData);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.StreamDataBlocked) || !w.TryWriteVarInt(StreamId) || !w.TryWriteVarInt(MaximumStreamData))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
