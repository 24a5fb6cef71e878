namespace System.Net.Quic.Managed.Wire;

/// <summary>STOP_SENDING. RFC 9000 §19.5.</summary>
internal readonly record struct StopSendingFrame(ulong StreamId, ulong ApplicationErrorCode)
{
    public static TransportErrorCode TryRead(ref QuicReader reader, out StopSendingFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong streamId) & reader.TryReadVarInt(out ulong error);
        frame = new StopSendingFrame(streamId, error);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(StreamId) + VariableLengthInteger.GetEncodedLength(ApplicationErrorCode);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.StopSending) || !w.TryWriteVarInt(StreamId) || !w.TryWriteVarInt(ApplicationErrorCode))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
