namespace System.Net.Quic.Managed.Wire;

/// <summary>PATH_RESPONSE: echoes the 8 bytes of a PATH_CHALLENGE, held as a big-endian integer. RFC 9000 §19.18.</summary>
internal readonly record struct PathResponseFrame(ulong Data)
{
    public const int EncodedLength = 9;

    public static TransportErrorCode TryRead(ref QuicReader reader, out PathResponseFrame frame)
    {
        bool ok = reader.TryReadUInt64(out ulong data);
        frame = new PathResponseFrame(data);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public bool TryWrite(ref QuicWriter writer)
    {
        if (writer.Remaining < EncodedLength)
        {
            return false;
        }

        writer.TryWriteByte((byte)FrameType.PathResponse);
        writer.TryWriteUInt64(Data);
        return true;
    }
}
