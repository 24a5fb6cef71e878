namespace QuicManaged.Http.Framing;

/// <summary>Span-level frame encoding and decoding (RFC 9114 §7). Decoders return error values, never throw.</summary>
internal static class Http3FrameCodec
{
    /// <summary>Largest frame header: two 8-byte varints.</summary>
    public const int MaxFrameHeaderLength = 16;

    public static int WriteFrameHeader(Span<byte> destination, long type, long length)
    {
        int a = VariableLengthInteger.Write(destination, type);
        if (a < 0)
        {
            return -1;
        }

        int b = VariableLengthInteger.Write(destination.Slice(a), length);
        return b < 0 ? -1 : a + b;
    }

    /// <summary>False when the input ends inside the header (type and length varints).</summary>
    public static bool TryReadFrameHeader(ReadOnlySpan<byte> source, out Http3FrameHeader header, out int consumed)
    {
        header = default;
        consumed = 0;
        if (!VariableLengthInteger.TryRead(source, out long type, out int a)
            || !VariableLengthInteger.TryRead(source.Slice(a), out long length, out int b))
        {
            return false;
        }

        header = new Http3FrameHeader(type, length);
        consumed = a + b;
        return true;
    }

    /// <summary>Encodes a whole frame whose payload is a single varint (GOAWAY, MAX_PUSH_ID, CANCEL_PUSH).</summary>
    public static byte[] EncodeSingleIntegerFrame(long type, long value)
    {
        int payloadLength = VariableLengthInteger.GetLength(value);
        byte[] frame = new byte[VariableLengthInteger.GetLength(type) + VariableLengthInteger.GetLength(payloadLength) + payloadLength];
        int offset = WriteFrameHeader(frame, type, payloadLength);
        VariableLengthInteger.Write(frame.AsSpan(offset), value);
        return frame;
    }

    /// <summary>
    /// RFC 9114 §7.2.3, §7.2.6, §7.2.7: the payload is exactly one varint; anything else is H3_FRAME_ERROR.
    /// </summary>
    public static Http3ErrorCode TryReadSingleInteger(ReadOnlySpan<byte> payload, out long value)
    {
        if (!VariableLengthInteger.TryRead(payload, out value, out int consumed) || consumed != payload.Length)
        {
            value = 0;
            return Http3ErrorCode.FrameError;
        }

        return Http3ErrorCode.NoError;
    }

    public static byte[] EncodeFrame(long type, ReadOnlySpan<byte> payload)
    {
        byte[] frame = new byte[VariableLengthInteger.GetLength(type) + VariableLengthInteger.GetLength(payload.Length) + payload.Length];
        int offset = WriteFrameHeader(frame, type, payload.Length);
        payload.CopyTo(frame.AsSpan(offset));
        return frame;
    }
}
