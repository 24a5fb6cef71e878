namespace System.Net.Quic.Managed.Wire;

/// <summary>CONNECTION_CLOSE: 0x1c for transport errors (with the triggering frame type), 0x1d for application errors.
/// RFC 9000 §19.19. <see cref="ReasonPhrase"/> points into the packet payload (UTF-8, not validated here).</summary>
internal readonly ref struct ConnectionCloseFrame
{
    public ConnectionCloseFrame(bool isApplicationError, ulong errorCode, ulong triggeringFrameType, ReadOnlySpan<byte> reasonPhrase)
    {
        IsApplicationError = isApplicationError;
        ErrorCode = errorCode;
        TriggeringFrameType = triggeringFrameType;
        ReasonPhrase = reasonPhrase;
    }

    /// <summary>True for type 0x1d.</summary>
    public bool IsApplicationError { get; }

    /// <summary>A <see cref="TransportErrorCode"/> for 0x1c, an application code for 0x1d.</summary>
    public ulong ErrorCode { get; }

    /// <summary>0x1c only: the type of the frame that caused the error, 0 when unknown.</summary>
    public ulong TriggeringFrameType { get; }

    public ReadOnlySpan<byte> ReasonPhrase { get; }

    public static ConnectionCloseFrame Transport(TransportErrorCode error, FrameType triggeringFrameType, ReadOnlySpan<byte> reasonPhrase) =>
        new(false, (ulong)error, (ulong)triggeringFrameType, reasonPhrase);

    public static ConnectionCloseFrame Application(ulong errorCode, ReadOnlySpan<byte> reasonPhrase) => new(true, errorCode, 0, reasonPhrase);

    public static TransportErrorCode TryRead(ref QuicReader reader, FrameType type, out ConnectionCloseFrame frame)
    {
        frame = default;
        bool application = type == FrameType.ConnectionCloseApplication;
        ulong frameType = 0;
        if (!reader.TryReadVarInt(out ulong errorCode) ||
            (!application && !reader.TryReadVarInt(out frameType)) ||
            !reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> reason))
        {
            return TransportErrorCode.FrameEncodingError;
        }

        frame = new ConnectionCloseFrame(application, errorCode, frameType, reason);
        return TransportErrorCode.NoError;
    }

    public int EncodedLength => 1 + VariableLengthInteger.GetEncodedLength(ErrorCode) +
        (IsApplicationError ? 0 : VariableLengthInteger.GetEncodedLength(TriggeringFrameType)) +
        VariableLengthInteger.GetEncodedLength((ulong)ReasonPhrase.Length) + ReasonPhrase.Length;

    public bool TryWrite(ref QuicWriter writer)
    {
        QuicWriter w = writer;
        if (!w.TryWriteByte((byte)(IsApplicationError ? FrameType.ConnectionCloseApplication : FrameType.ConnectionClose)) ||
            !w.TryWriteVarInt(ErrorCode) ||
            (!IsApplicationError && !w.TryWriteVarInt(TriggeringFrameType)) ||
            !w.TryWriteLengthPrefixed(ReasonPhrase))
        {
            return false;
        }

        writer = w;
        return true;
    }
}
