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
    public static TransportErrorCode TryRead(scoped ref QuicReader reader, out NewConnectionIdFrame frame)
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

    /// <summary>The encoded length with the largest sequence numbers and a 20-byte connection ID: room that always suffices for this frame.</summary>
    public const int MaxEncodedLength = 1 + (2 * VariableLengthInteger.MaxLength) + 1 + ConnectionIdLimits.MaxLength + StatelessReset.TokenLength;

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(SequenceNumber) +
        VariableLengthInteger.GetEncodedLength(RetirePriorTo) + 1 + ConnectionId.Length + StatelessReset.TokenLength;

    public bool TryWrite(ref QuicWriter writer) => TryWrite(ref writer, SequenceNumber, RetirePriorTo, ConnectionId, StatelessResetToken);

    /// <summary>Writes a NEW_CONNECTION_ID frame from values; the spans are only read (callers may pass stack memory).</summary>
    public static bool TryWrite(ref QuicWriter writer, ulong sequenceNumber, ulong retirePriorTo,
        scoped ReadOnlySpan<byte> connectionId, scoped ReadOnlySpan<byte> statelessResetToken)
    {
        QuicWriter w = writer;
        if (retirePriorTo > sequenceNumber || connectionId.Length < 1 || connectionId.Length > ConnectionIdLimits.MaxLength ||
            statelessResetToken.Length != StatelessReset.TokenLength ||
            !w.TryWriteByte((byte)FrameType.NewConnectionId) || !w.TryWriteVarInt(sequenceNumber) || !w.TryWriteVarInt(retirePriorTo) ||
            !w.TryWriteByte((byte)connectionId.Length) || !w.TryWriteBytes(connectionId) || !w.TryWriteBytes(statelessResetToken))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
