namespace QuicManaged.Http.Qpack;

/// <summary>
/// The HPACK Huffman code (RFC 7541 §5.2, Appendix B), used unchanged by QPACK (RFC 9204 §4.1.2).
/// The Appendix B code is canonical: codes are assigned in order of (length, symbol), so the table below
/// stores only the "len in bits" column and the codes are rebuilt from it at type initialisation.
/// </summary>
internal static class HuffmanCode
{
    public const int EndOfString = 256;

    // RFC 7541 Appendix B, "len in bits" column for symbols 0..256 (256 = EOS).
    private static ReadOnlySpan<byte> CodeLengths =>
    [
            13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
            28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
            6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
            5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
            13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
            7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
            15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
            6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
            20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
            24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
            22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
            21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
            26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
            19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
            20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
            26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
            30,
    ];

    private static readonly uint[] s_codes = BuildCodes();
    // Canonical decoding tables indexed by code length (1..30).
    private static readonly int[] s_firstCode = new int[31];
    private static readonly int[] s_countByLength = new int[31];
    private static readonly int[] s_symbolOffset = new int[31];
    private static readonly short[] s_symbolsByCode = BuildDecodeTables();

    public static uint GetCode(int symbol) => s_codes[symbol];

    public static int GetCodeLength(int symbol) => CodeLengths[symbol];

    private static uint[] BuildCodes()
    {
        uint[] codes = new uint[257];
        uint code = 0;
        int previousLength = 0;
        for (int length = 1; length <= 30; length++)
        {
            for (int symbol = 0; symbol < 257; symbol++)
            {
                if (CodeLengths[symbol] != length)
                {
                    continue;
                }

                code <<= length - previousLength;
                previousLength = length;
                codes[symbol] = code;
                code++;
            }
        }

        return codes;
    }

    private static short[] BuildDecodeTables()
    {
        short[] symbols = new short[257];
        int next = 0;
        int code = 0;
        int previousLength = 0;
        for (int length = 1; length <= 30; length++)
        {
            s_symbolOffset[length] = next;
            code <<= length - previousLength;
            previousLength = length;
            s_firstCode[length] = code;
            for (int symbol = 0; symbol < 257; symbol++)
            {
                if (CodeLengths[symbol] == length)
                {
                    symbols[next++] = (short)symbol;
                    s_countByLength[length]++;
                    code++;
                }
            }
        }

        return symbols;
    }

    /// <summary>Number of bytes the Huffman encoding of <paramref name="source"/> takes, padding included.</summary>
    public static int GetEncodedLength(ReadOnlySpan<byte> source)
    {
        long bits = 0;
        foreach (byte b in source)
        {
            bits += CodeLengths[b];
        }

        return (int)((bits + 7) / 8);
    }

    /// <summary>Encodes <paramref name="source"/>; the last byte is padded with the EOS prefix (all ones), RFC 7541 §5.2.</summary>
    /// <returns>Bytes written, or -1 when <paramref name="destination"/> is too small.</returns>
    public static int Encode(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        ulong accumulator = 0;
        int pendingBits = 0;
        int written = 0;
        foreach (byte b in source)
        {
            int length = CodeLengths[b];
            accumulator = (accumulator << length) | s_codes[b];
            pendingBits += length;
            while (pendingBits >= 8)
            {
                if (written >= destination.Length)
                {
                    return -1;
                }

                pendingBits -= 8;
                destination[written++] = (byte)(accumulator >> pendingBits);
            }
        }

        if (pendingBits > 0)
        {
            if (written >= destination.Length)
            {
                return -1;
            }

            int padding = 8 - pendingBits;
            destination[written++] = (byte)((accumulator << padding) | ((1u << padding) - 1));
        }

        return written;
    }

    /// <summary>
    /// Decodes a Huffman string. Fails (returns false) on the EOS symbol, on padding longer than 7 bits,
    /// on padding that is not the most significant bits of EOS (RFC 7541 §5.2), and when
    /// <paramref name="destination"/> is too small.
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> source, Span<byte> destination, out int written)
    {
        written = 0;
        int code = 0;
        int length = 0;
        foreach (byte b in source)
        {
            for (int bit = 7; bit >= 0; bit--)
            {
                code = (code << 1) | ((b >> bit) & 1);
                length++;
                int index = code - s_firstCode[length];
                if (index >= 0 && index < s_countByLength[length])
                {
                    int symbol = s_symbolsByCode[s_symbolOffset[length] + index];
                    if (symbol == EndOfString)
                    {
                        return false;
                    }

                    if (written >= destination.Length)
                    {
                        return false;
                    }

                    destination[written++] = (byte)symbol;
                    code = 0;
                    length = 0;
                }
                else if (length >= 30)
                {
                    // No code is longer than 30 bits: the input is not a valid code sequence.
                    return false;
                }
            }
        }

        // RFC 7541 §5.2: the remainder must be strictly shorter than 8 bits and all ones (a prefix of EOS).
        if (length > 7)
        {
            return false;
        }

        int allOnes = (1 << length) - 1;
        return code == allOnes;
    }
}
