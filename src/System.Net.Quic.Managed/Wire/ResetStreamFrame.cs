namespace System.Net.Quic.Managed.Wire;

/// <summary>RESET_STREAM. RFC 9000 §19.4.</summary>
internal readonly record struct ResetStreamFrame(ulong StreamId, ulong ApplicationErrorCode, ulong FinalSize)
{
    public static TransportErrorCode TryRead(ref QuicReader reader, out ResetStreamFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong streamId) & reader.TryReadVarInt(out ulong error) & reader.TryReadVarInt(out ulong finalSize);
        frame = new ResetStreamFrame(streamId, error, finalSize);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(StreamId) +
        VariableLengthInteger.GetEncodedLength(ApplicationErrorCode) + VariableLengthInteger.GetEncodedLength(FinalSize);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.ResetStream) || !w.TryWriteVarInt(StreamId) ||
            !w.TryWriteVarInt(ApplicationErrorCode) || !w.TryWriteVarInt(FinalSize))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
