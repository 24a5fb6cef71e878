using System.Buffers.Binary;

namespace QuicManaged.Http.Framing;

/// <summary>QUIC variable-length integers (RFC 9000 §16), used for every HTTP/3 frame field (RFC 9114 §1.2).</summary>
internal static class VariableLengthInteger
{
    public const long MaxValue = (1L << 62) - 1;

    public static int GetLength(long value) => value switch
    {
        < 0 => throw new ArgumentOutOfRangeException(nameof(value)),
        <= 63 => 1,
        <= 16383 => 2,
        <= 1073741823 => 4,
        <= MaxValue => 8,
        _ => throw new ArgumentOutOfRangeException(nameof(value)),
    };

    /// <summary>Length of the integer whose first byte is <paramref name="firstByte"/> (the two high bits).</summary>
    public static int GetLengthFromFirstByte(byte firstByte) => 1 << (firstByte >> 6);

    /// <summary>Returns bytes written, or -1 when the destination is too small.</summary>
    public static int Write(Span<byte> destination, long value)
    {
        int length = GetLength(value);
        if (destination.Length < length)
        {
            return -1;
        }

        switch (length)
        {
            case 1:
                destination[0] = (byte)value;
                break;
            case 2:
                BinaryPrimitives.WriteUInt16BigEndian(destination, (ushort)(0x4000 | value));
                break;
            case 4:
                BinaryPrimitives.WriteUInt32BigEndian(destination, 0x80000000u | (uint)value);
                break;
            default:
                BinaryPrimitives.WriteUInt64BigEndian(destination, 0xC000000000000000UL | (ulong)value);
                break;
        }

        return length;
    }

    /// <summary>False when the input ends inside the integer.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out long value, out int consumed)
    {
        value = 0;
        consumed = 0;
        if (source.IsEmpty)
        {
            return false;
        }

        int length = GetLengthFromFirstByte(source[0]);
        if (source.Length < length)
        {
            return false;
        }

        value = length switch
        {
            1 => source[0] & 0x3f,
            2 => BinaryPrimitives.ReadUInt16BigEndian(source) & 0x3fff,
            4 => BinaryPrimitives.ReadUInt32BigEndian(source) & 0x3fffffff,
            _ => (long)(BinaryPrimitives.ReadUInt64BigEndian(source) & 0x3fffffffffffffffUL),
        };
        consumed = length;
        return true;
    }
}
