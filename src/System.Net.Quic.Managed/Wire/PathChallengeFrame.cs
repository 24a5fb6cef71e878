namespace System.Net.Quic.Managed.Wire;

/// <summary>PATH_CHALLENGE: 8 bytes of data, held as a big-endian integer. RFC 9000 §19.17.</summary>
internal readonly record struct PathChallengeFrame(ulong Data)
{
    public const int EncodedLength = 9;

    public static TransportErrorCode TryRead(ref QuicReader reader, out PathChallengeFrame frame)
    {
        bool ok = reader.TryReadUInt64(out ulong data);
        frame = new PathChallengeFrame(data);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    public bool TryWrite(ref QuicWriter writer)
    {
        if (writer.Remaining < EncodedLength)
        {
            return false;
        }

        writer.TryWriteByte((byte)FrameType.PathChallenge);
        writer.TryWriteUInt64(Data);
        return true;
    }
}
