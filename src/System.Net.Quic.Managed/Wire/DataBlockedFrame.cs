namespace System.Net.Quic.Managed.Wire;

/// <summary>DATA_BLOCKED: the connection-level limit at which the sender is blocked. RFC 9000 §19.12.</summary>
internal readonly record struct DataBlockedFrame(ulong MaximumData)
{
    public static TransportErrorCode TryRead(ref QuicReader reader, out DataBlockedFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong value);
        frame = new DataBlockedFrame(value);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(MaximumData);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.DataBlocked) || !w.TryWriteVarInt(MaximumData))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
