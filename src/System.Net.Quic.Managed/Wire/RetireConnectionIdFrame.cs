namespace System.Net.Quic.Managed.Wire;

/// <summary>RETIRE_CONNECTION_ID. RFC 9000 §19.16.</summary>
internal readonly record struct RetireConnectionIdFrame(ulong SequenceNumber)
{
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, out RetireConnectionIdFrame frame)
    {
        bool ok = reader.TryReadVarInt(out ulong value);
        frame = new RetireConnectionIdFrame(value);
        return ok ? TransportErrorCode.NoError : TransportErrorCode.FrameEncodingError;
    }

    /// <summary>The encoded length with the largest sequence number: room that always suffices for this frame.</summary>
    public const int MaxEncodedLength = 1 + VariableLengthInteger.MaxLength;

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(SequenceNumber);

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)FrameType.RetireConnectionId) || !w.TryWriteVarInt(SequenceNumber))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
