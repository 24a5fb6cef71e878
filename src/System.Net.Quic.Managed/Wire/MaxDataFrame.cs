namespace System.Net.Quic.Managed.Wire;

/// <summary>MAX_DATA. RFC 9000 §19.9.</summary>
internal readonly record struct MaxDataFrame(ulong MaximumData)
{
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, out MaxDataFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong value);
        frame = new MaxDataFrame(value);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    /// <summary>The encoded length with the largest maximum: room that always suffices for this frame.</summary>
    public const int MaxEncodedLength = 1 + VariableLengthInteger.MaxLength;

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(MaximumData);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.MaxData) || !w.TryWriteVarInt(MaximumData))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
