using QuicManaged.Http.Framing;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// The QPACK encoder and decoder streams (RFC 9204 §4.3, §4.4) of an endpoint that advertises a dynamic table capacity
/// of 0: the only valid encoder instruction is Set Dynamic Table Capacity 0, the only valid decoder instruction is
/// Stream Cancellation. Anything else is QPACK_ENCODER_STREAM_ERROR / QPACK_DECODER_STREAM_ERROR.
/// </summary>
internal static class QpackInstructions
{
    /// <summary>Consumes whole instructions from <paramref name="input"/>; returns how many bytes; <paramref name="error"/> is set on a violation.</summary>
    public static int Consume(ReadOnlySpan<byte> input, bool encoderStream, out Http3ErrorCode error)
    {
        error = Http3ErrorCode.NoError;
        int offset = 0;
        while (offset < input.Length)
        {
            byte first = input[offset];
            PrefixedIntegerStatus status;
            ulong value;
            int consumed;
            if (encoderStream)
            {
                // RFC 9204 §4.3.1: Set Dynamic Table Capacity 001xxxxx; only 0 fits our advertised capacity 0.
                if ((first & 0xE0) != 0x20)
                {
                    error = Http3ErrorCode.QpackEncoderStreamError;
                    return offset;
                }

                status = PrefixedInteger.TryDecode(input.Slice(offset), 5, out value, out consumed);
                if (status == PrefixedIntegerStatus.Done && value != 0)
                {
                    error = Http3ErrorCode.QpackEncoderStreamError;
                    return offset;
                }
            }
            else
            {
                // RFC 9204 §4.4.2: Stream Cancellation 01xxxxxx is the only instruction valid without dynamic references.
                if ((first & 0xC0) != 0x40)
                {
                    error = Http3ErrorCode.QpackDecoderStreamError;
                    return offset;
                }

                status = PrefixedInteger.TryDecode(input.Slice(offset), 6, out _, out consumed);
            }

            if (status == PrefixedIntegerStatus.Incomplete)
            {
                if (input.Length - offset >= 16)
                {
                    error = encoderStream ? Http3ErrorCode.QpackEncoderStreamError : Http3ErrorCode.QpackDecoderStreamError;
                }

                return offset;
            }

            if (status == PrefixedIntegerStatus.Overflow)
            {
                error = encoderStream ? Http3ErrorCode.QpackEncoderStreamError : Http3ErrorCode.QpackDecoderStreamError;
                return offset;
            }

            offset += consumed;
        }

        return offset;
    }
}
