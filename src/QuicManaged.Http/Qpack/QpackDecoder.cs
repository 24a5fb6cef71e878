using System.Buffers;
using System.Text;
using QuicManaged.Http.Framing;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// QPACK field-section decoder for a decoder whose dynamic table capacity is 0 (RFC 9204 §3.2.3, §4.5):
/// any dynamic-table reference, or a non-zero Required Insert Count, is QPACK_DECOMPRESSION_FAILED.
/// Errors are returned as values; nothing is allocated from a size read off the wire before it is checked
/// against the bytes actually present and the field-section limit.
/// </summary>
internal static class QpackDecoder
{
    public static Http3ErrorCode Decode(ReadOnlySpan<byte> section, long maxFieldSectionSize, List<HeaderField> fields, out string? reason)
    {
        reason = null;
        // RFC 9204 §4.5.1.1: Encoded Required Insert Count, 8-bit prefix. With MaxEntries = 0 only 0 is valid.
        PrefixedIntegerStatus status = PrefixedInteger.TryDecode(section, 8, out ulong requiredInsertCount, out int consumed);
        if (status != PrefixedIntegerStatus.Done)
        {
            return Fail(out reason, "truncated or oversized Required Insert Count");
        }

        if (requiredInsertCount != 0)
        {
            return Fail(out reason, "Required Insert Count is non-zero but the dynamic table capacity is 0");
        }

        section = section.Slice(consumed);
        // RFC 9204 §4.5.1.2: sign bit + Delta Base, 7-bit prefix. Irrelevant when nothing is dynamic, but must parse.
        status = PrefixedInteger.TryDecode(section, 7, out _, out consumed);
        if (status != PrefixedIntegerStatus.Done)
        {
            return Fail(out reason, "truncated or oversized Delta Base");
        }

        section = section.Slice(consumed);
        long totalSize = 0;
        while (!section.IsEmpty)
        {
            byte first = section[0];
            string name;
            string value;
            if ((first & 0x80) != 0)
            {
                // RFC 9204 §4.5.2: Indexed Field Line, 1 T index(6+).
                if ((first & 0x40) == 0)
                {
                    return Fail(out reason, "indexed field line references the dynamic table");
                }

                if (!TryReadStaticIndex(ref section, 6, out int index))
                {
                    return Fail(out reason, "invalid static table index");
                }

                HeaderField entry = QpackStaticTable.Get(index);
                name = entry.Name;
                value = entry.Value;
            }
            else if ((first & 0x40) != 0)
            {
                // RFC 9204 §4.5.4: Literal Field Line with Name Reference, 01 N T index(4+) then value.
                if ((first & 0x10) == 0)
                {
                    return Fail(out reason, "literal field line references a dynamic table name");
                }

                if (!TryReadStaticIndex(ref section, 4, out int index))
                {
                    return Fail(out reason, "invalid static table name index");
                }

                name = QpackStaticTable.Get(index).Name;
                Http3ErrorCode valueError = TryReadString(ref section, 7, 0x80, maxFieldSectionSize - totalSize, out value, out reason);
                if (valueError != Http3ErrorCode.NoError)
                {
                    return valueError;
                }
            }
            else if ((first & 0x20) != 0)
            {
                // RFC 9204 §4.5.6: Literal Field Line with Literal Name, 001 N H name-length(3+), then value.
                Http3ErrorCode nameError = TryReadString(ref section, 3, 0x08, maxFieldSectionSize - totalSize, out name, out reason);
                if (nameError != Http3ErrorCode.NoError)
                {
                    return nameError;
                }

                Http3ErrorCode valueError = TryReadString(ref section, 7, 0x80, maxFieldSectionSize - totalSize - name.Length, out value, out reason);
                if (valueError != Http3ErrorCode.NoError)
                {
                    return valueError;
                }
            }
            else
            {
                // RFC 9204 §4.5.3 / §4.5.5: post-base forms (0001xxxx, 0000xxxx) always refer to the dynamic table.
                return Fail(out reason, "post-base reference to the dynamic table");
            }

            totalSize += name.Length + value.Length + 32L;
            if (totalSize > maxFieldSectionSize)
            {
                reason = "field section exceeds the advertised SETTINGS_MAX_FIELD_SECTION_SIZE";
                return Http3ErrorCode.ExcessiveLoad;
            }

            fields.Add(new HeaderField(name, value));
        }

        return Http3ErrorCode.NoError;
    }

    private static Http3ErrorCode Fail(out string? reason, string text)
    {
        reason = text;
        return Http3ErrorCode.QpackDecompressionFailed;
    }

    private static bool TryReadStaticIndex(ref ReadOnlySpan<byte> section, int prefixBits, out int index)
    {
        index = -1;
        if (PrefixedInteger.TryDecode(section, prefixBits, out ulong value, out int consumed) != PrefixedIntegerStatus.Done
            || value >= QpackStaticTable.Count)
        {
            return false;
        }

        index = (int)value;
        section = section.Slice(consumed);
        return true;
    }

    // RFC 9204 §4.1.2: string literal = H flag + N-bit-prefix length + bytes.
    private static Http3ErrorCode TryReadString(ref ReadOnlySpan<byte> section, int prefixBits, byte huffmanFlag, long budget, out string text, out string? reason)
    {
        text = string.Empty;
        reason = null;
        if (section.IsEmpty)
        {
            return Fail(out reason, "truncated string literal");
        }

        bool huffman = (section[0] & huffmanFlag) != 0;
        if (PrefixedInteger.TryDecode(section, prefixBits, out ulong length, out int consumed) != PrefixedIntegerStatus.Done)
        {
            return Fail(out reason, "truncated or oversized string length");
        }

        // The length is checked against the bytes present before anything is sized by it.
        if (length > (ulong)(section.Length - consumed))
        {
            return Fail(out reason, "string literal longer than the field section");
        }

        ReadOnlySpan<byte> raw = section.Slice(consumed, (int)length);
        section = section.Slice(consumed + (int)length);
        if (!huffman)
        {
            if (raw.Length > budget)
            {
                reason = "field section exceeds the advertised SETTINGS_MAX_FIELD_SECTION_SIZE";
                return Http3ErrorCode.ExcessiveLoad;
            }

            text = Encoding.Latin1.GetString(raw);
            return Http3ErrorCode.NoError;
        }

        // The shortest Huffman code is 5 bits, so the decoded form is at most 8/5 of the encoded length.
        int maxDecoded = (int)Math.Min((raw.Length * 8L / 5) + 1, Math.Clamp(budget, 0, int.MaxValue - 1) + 1);
        byte[]? rented = null;
        Span<byte> buffer = maxDecoded <= 512 ? stackalloc byte[512] : (rented = ArrayPool<byte>.Shared.Rent(maxDecoded));
        try
        {
            buffer = buffer.Slice(0, maxDecoded);
            if (!HuffmanCode.TryDecode(raw, buffer, out int written))
            {
                if (written >= buffer.Length && buffer.Length > budget)
                {
                    reason = "field section exceeds the advertised SETTINGS_MAX_FIELD_SECTION_SIZE";
                    return Http3ErrorCode.ExcessiveLoad;
                }

                return Fail(out reason, "invalid Huffman string (EOS, bad padding or invalid code)");
            }

            if (written > budget)
            {
                reason = "field section exceeds the advertised SETTINGS_MAX_FIELD_SECTION_SIZE";
                return Http3ErrorCode.ExcessiveLoad;
            }

            text = Encoding.Latin1.GetString(buffer.Slice(0, written));
            return Http3ErrorCode.NoError;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }
}
