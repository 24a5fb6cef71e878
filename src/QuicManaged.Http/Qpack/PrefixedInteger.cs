namespace QuicManaged.Http.Qpack;

/// <summary>Prefixed integers, RFC 7541 §5.1 (used by QPACK, RFC 9204 §4.1.1).</summary>
internal static class PrefixedInteger
{
    // QPACK values are bounded by QUIC's 62-bit integers; anything larger is an encoding error, not a value.
    public const ulong MaxValue = (1UL << 62) - 1;

    /// <summary>
    /// Writes <paramref name="value"/> with an N-bit prefix. <paramref name="firstByteFlags"/> holds the bits above
    /// the prefix in the first byte. Returns bytes written, or -1 when the destination is too small.
    /// </summary>
    public static int Encode(ulong value, int prefixBits, byte firstByteFlags, Span<byte> destination)
    {
        if (destination.IsEmpty)
        {
            return -1;
        }

        ulong maxPrefix = (1UL << prefixBits) - 1;
        if (value < maxPrefix)
        {
            destination[0] = (byte)(firstByteFlags | (byte)value);
            return 1;
        }

        destination[0] = (byte)(firstByteFlags | (byte)maxPrefix);
        value -= maxPrefix;
        int written = 1;
        while (value >= 128)
        {
            if (written >= destination.Length)
            {
                return -1;
            }

            destination[written++] = (byte)((value % 128) + 128);
            value /= 128;
        }

        if (written >= destination.Length)
        {
            return -1;
        }

        destination[written++] = (byte)value;
        return written;
    }

    /// <summary>Reads an N-bit-prefix integer starting at <paramref name="source"/>[0] (flag bits above the prefix are ignored).</summary>
    public static PrefixedIntegerStatus TryDecode(ReadOnlySpan<byte> source, int prefixBits, out ulong value, out int consumed)
    {
        value = 0;
        consumed = 0;
        if (source.IsEmpty)
        {
            return PrefixedIntegerStatus.Incomplete;
        }

        ulong maxPrefix = (1UL << prefixBits) - 1;
        ulong result = source[0] & maxPrefix;
        if (result < maxPrefix)
        {
            value = result;
            consumed = 1;
            return PrefixedIntegerStatus.Done;
        }

        int shift = 0;
        for (int i = 1; i < source.Length; i++)
        {
            byte b = source[i];
            // 62 bits of payload need at most 9 continuation bytes; more means the value cannot be valid.
            if (shift > 56)
            {
                return PrefixedIntegerStatus.Overflow;
            }

            result += (ulong)(b & 0x7f) << shift;
            if (result > MaxValue)
            {
                return PrefixedIntegerStatus.Overflow;
            }

            if ((b & 0x80) == 0)
            {
                value = result;
                consumed = i + 1;
                return PrefixedIntegerStatus.Done;
            }

            shift += 7;
        }

        return PrefixedIntegerStatus.Incomplete;
    }
}
