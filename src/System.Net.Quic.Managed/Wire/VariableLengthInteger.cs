using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Wire;

/// <summary>QUIC variable-length integers. RFC 9000 §16.</summary>
/// <remarks>The two most significant bits of the first byte give the encoded length (1, 2, 4 or 8 bytes);
/// the remaining bits hold the value in network byte order.</remarks>
internal static class VariableLengthInteger
{
    /// <summary>The largest value that can be encoded: 2^62-1.</summary>
    public const ulong MaxValue = (1UL << 62) - 1;

    /// <summary>The longest encoding in bytes.</summary>
    public const int MaxLength = 8;

    /// <summary>Length in bytes of the minimal encoding of <paramref name="value"/>, or 0 when it exceeds <see cref="MaxValue"/>.</summary>
    public static int GetEncodedLength(ulong value)
    {
        if (value <= 63)
        {
            return 1;
        }

        if (value <= 16383)
        {
            return 2;
        }

        if (value <= 1073741823)
        {
            return 4;
        }

        return value <= MaxValue ? 8 : 0;
    }

    /// <summary>The encoded length announced by a first byte (its two high bits).</summary>
    public static int GetLengthFromFirstByte(byte firstByte) => 1 << (firstByte >> 6);

    /// <summary>The largest value an encoding of <paramref name="length"/> bytes can carry.</summary>
    public static ulong GetMaxValueForLength(int length) => length switch
    {
        1 => 63,
        2 => 16383,
        4 => 1073741823,
        8 => MaxValue,
        _ => 0,
    };

    /// <summary>Decodes one integer from the start of <paramref name="source"/>. False when the input is too short.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out ulong value, out int bytesRead)
    {
        if (source.IsEmpty)
        {
            value = 0;
            bytesRead = 0;
            return false;
        }

        int length = GetLengthFromFirstByte(source[0]);
        if (source.Length < length)
        {
            value = 0;
            bytesRead = 0;
            return false;
        }

        value = length switch
        {
            1 => source[0],
            2 => BinaryPrimitives.ReadUInt16BigEndian(source) & 0x3fffu,
            4 => BinaryPrimitives.ReadUInt32BigEndian(source) & 0x3fffffffu,
            _ => BinaryPrimitives.ReadUInt64BigEndian(source) & MaxValue,
        };
        bytesRead = length;
        return true;
    }

    /// <summary>Writes the minimal encoding of <paramref name="value"/>. False when it does not fit or exceeds <see cref="MaxValue"/>.</summary>
    public static bool TryWrite(Span<byte> destination, ulong value, out int bytesWritten)
    {
        int length = GetEncodedLength(value);
        if (length != 0 && TryWrite(destination, value, length))
        {
            bytesWritten = length;
            return true;
        }

        bytesWritten = 0;
        return false;
    }

    /// <summary>Writes <paramref name="value"/> using exactly <paramref name="length"/> bytes (1, 2, 4 or 8), which may be
    /// longer than minimal: RFC 9000 §16 allows that everywhere except frame types (§12.4).</summary>
    public static bool TryWrite(Span<byte> destination, ulong value, int length)
    {
        if (destination.Length < length || value > GetMaxValueForLength(length))
        {
            return false;
        }

        switch (length)
        {
            case 1:
                destination[0] = (byte)value;
                return true;
            case 2:
                BinaryPrimitives.WriteUInt16BigEndian(destination, (ushort)(value | 0x4000));
                return true;
            case 4:
                BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)value | 0x80000000u);
                return true;
            default:
                BinaryPrimitives.WriteUInt64BigEndian(destination, value | 0xc000000000000000UL);
                return true;
        }
    }
}
