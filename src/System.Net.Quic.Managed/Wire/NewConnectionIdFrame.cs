namespace System.Net.Quic.Managed.Wire;

/// <summary>NEW_CONNECTION_ID. RFC 9000 §19.15. The connection ID and reset token point into the packet payload.</summary>
internal readonly ref struct NewConnectionIdFrame
{
    public NewConnectionIdFrame(ulong sequenceNumber, ulong retirePriorTo, ReadOnlySpan<byte> connectionId, ReadOnlySpan<byte> statelessResetToken)
    {
        SequenceNumber = sequenceNumber;
        RetirePriorTo = retirePriorTo;
        ConnectionId = connectionId;
        StatelessResetToken = statelessResetToken;
    }

    public ulong SequenceNumber { get; }

    public ulong RetirePriorTo { get; }

    public ReadOnlySpan<byte> ConnectionId { get; }

    /// <summary>16 bytes.</summary>
    public ReadOnlySpan<byte> StatelessResetToken { get; }

    /// <summary>Reads the body. A length outside 1..20 or Retire Prior To greater than the Sequence Number is a
    /// FRAME_ENCODING_ERROR (RFC 9000 §19.15).</summary>
    public static TransportErrorCode TryRead(ref QuicReader reader, out NewConnectionIdFrame frame)
    {
        frame = default;
        if (!reader.TryReadVarInt(out ulong sequence) || !reader.TryReadVarInt(out ulong retirePriorTo) ||
            retirePriorTo > sequence || !reader.TryReadByte(out byte length) ||
            length < 1 || length > ConnectionIdLimits.MaxLength ||
            !reader.TryReadBytes(length, out ReadOnlySpan<byte> connectionId) ||
            !reader.TryReadBytes(StatelessReset.TokenLength, out ReadOnlySpan<byte> token))
        {
            return TransportErrorCode.FrameEncodingError;
        }

        frame = new NewConnectionIdFrame(sequence, retirePriorTo, connectionId, token);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(SequenceNumber) +
        VariableLengthInteger.GetEncodedLength(RetirePriorTo) + 1 + ConnectionId.Length + StatelessReset.TokenLength;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (RetirePriorTo > SequenceNumber || ConnectionId.Length < 1 || ConnectionId.Length > ConnectionIdLimits.MaxLength ||
            StatelessResetToken.Length != StatelessReset.TokenLength ||
            !w.TryWriteByte((byte)FrameType.NewConnectionId) || !w.TryWriteVarInt(SequenceNumber) || !w.TryWriteVarInt(RetirePriorTo) ||
            !w.TryWriteByte((byte)ConnectionId.Length) || !w.TryWriteBytes(ConnectionId) || !w.TryWriteBytes(StatelessResetToken))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
