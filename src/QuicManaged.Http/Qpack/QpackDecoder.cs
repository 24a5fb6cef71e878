using System.Buffers;
using System.Text;
using QuicManaged.Http.Framing;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// QPACK field-section decoder (RFC 9204 §4.5). Without a dynamic table (capacity 0, §3.2.3) any dynamic-table
/// reference, or a non-zero Required Insert Count, is QPACK_DECOMPRESSION_FAILED. With one, the prefix's Required
/// Insert Count and Base are decoded (§4.5.1) and relative and post-base references resolved against it; a reference
/// to an entry at or beyond the Required Insert Count, or one already evicted, is QPACK_DECOMPRESSION_FAILED.
/// Whether a section must wait for more inserts (is blocked) is the caller's decision, from <see cref="ReadPrefix"/>.
/// Errors are returned as values; nothing is allocated from a size read off the wire before it is checked
/// against the bytes actually present and the field-section limit.
/// </summary>
internal static class QpackDecoder
{
    /// <summary>Decodes a field section for a decoder whose dynamic table capacity is 0.</summary>
    public static Http3ErrorCode Decode(ReadOnlySpan<byte> section, long maxFieldSectionSize, List<HeaderField> fields, out string? reason)
        => Decode(section, maxFieldSectionSize, fields, null, 0, out reason);

    /// <summary>
    /// RFC 9204 §4.5.1: decodes the Encoded Required Insert Count (§4.5.1.1, against <paramref name="maxEntries"/> and the
    /// decoder's <paramref name="totalInserts"/> when the section arrived) and the Base (§4.5.1.2).
    /// </summary>
    public static Http3ErrorCode ReadPrefix(ReadOnlySpan<byte> section, long maxEntries, long totalInserts,
        out long requiredInsertCount, out long baseIndex, out int consumed, out string? reason)
    {
        requiredInsertCount = 0;
        baseIndex = 0;
        consumed = 0;
        reason = null;
        PrefixedIntegerStatus status = PrefixedInteger.TryDecode(section, 8, out ulong encodedInsertCount, out int used);
        if (status != PrefixedIntegerStatus.Done)
        {
            return Fail(out reason, "truncated or oversized Required Insert Count");
        }

        if (encodedInsertCount != 0)
        {
            if (maxEntries == 0)
            {
                return Fail(out reason, "Required Insert Count is non-zero but the dynamic table capacity is 0");
            }

            ulong fullRange = 2 * (ulong)maxEntries;
            if (encodedInsertCount > fullRange)
            {
                return Fail(out reason, "Encoded Required Insert Count exceeds 2 * MaxEntries");
            }

            ulong maxValue = (ulong)totalInserts + (ulong)maxEntries;
            ulong maxWrapped = maxValue / fullRange * fullRange;
            ulong ric = maxWrapped + encodedInsertCount - 1;
            if (ric > maxValue)
            {
                if (ric <= fullRange)
                {
                    return Fail(out reason, "Required Insert Count is beyond what the encoder could have inserted");
                }

                ric -= fullRange;
            }

            if (ric == 0)
            {
                return Fail(out reason, "Required Insert Count decodes to 0 from a non-zero encoding");
            }

            requiredInsertCount = (long)ric;
        }

        consumed = used;
        section = section.Slice(used);
        // §4.5.1.2: sign bit + Delta Base, 7-bit prefix.
        if (section.IsEmpty)
        {
            return Fail(out reason, "truncated or oversized Delta Base");
        }

        bool negative = (section[0] & 0x80) != 0;
        status = PrefixedInteger.TryDecode(section, 7, out ulong deltaBase, out used);
        if (status != PrefixedIntegerStatus.Done)
        {
            return Fail(out reason, "truncated or oversized Delta Base");
        }

        consumed += used;
        if (requiredInsertCount == 0)
        {
            // Nothing in the section may be dynamic; the Base is irrelevant (and not validated further).
            return Http3ErrorCode.NoError;
        }

        if (negative)
        {
            if (deltaBase >= (ulong)requiredInsertCount)
            {
                return Fail(out reason, "negative Base");
            }

            baseIndex = requiredInsertCount - (long)deltaBase - 1;
        }
        else
        {
            if (deltaBase > PrefixedInteger.MaxValue - (ulong)requiredInsertCount)
            {
                return Fail(out reason, "Base out of range");
            }

            baseIndex = requiredInsertCount + (long)deltaBase;
        }

        return Http3ErrorCode.NoError;
    }

    /// <summary>
    /// Decodes a field section. <paramref name="table"/> null means capacity 0. <paramref name="totalInsertsAtArrival"/> is
    /// the table's Insert Count when the section arrived (for the Required Insert Count's wrap-around); the caller has
    /// already waited, if needed, until the table holds the Required Insert Count.
    /// </summary>
    public static Http3ErrorCode Decode(ReadOnlySpan<byte> section, long maxFieldSectionSize, List<HeaderField> fields,
        QpackDynamicTable? table, long totalInsertsAtArrival, out string? reason)
    {
        Http3ErrorCode prefixError = ReadPrefix(section, table?.MaxEntries ?? 0, totalInsertsAtArrival,
            out long requiredInsertCount, out long baseIndex, out int consumed, out reason);
        if (prefixError != Http3ErrorCode.NoError)
        {
            return prefixError;
        }

        if (requiredInsertCount > 0 && requiredInsertCount > table!.InsertCount)
        {
            return Fail(out reason, "the section was decoded before its Required Insert Count was reached");
        }

        section = section.Slice(consumed);
        long totalSize = 0;
        long largestReference = -1;
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
                    if (!TryReadDynamic(ref section, 6, postBase: false, table, requiredInsertCount, baseIndex, out HeaderField dynamicEntry, ref largestReference, out reason))
                    {
                        return Http3ErrorCode.QpackDecompressionFailed;
                    }

                    name = dynamicEntry.Name;
                    value = dynamicEntry.Value;
                }
                else
                {
                    if (!TryReadStaticIndex(ref section, 6, out int index))
                    {
                        return Fail(out reason, "invalid static table index");
                    }

                    HeaderField entry = QpackStaticTable.Get(index);
                    name = entry.Name;
                    value = entry.Value;
                }
            }
            else if ((first & 0x40) != 0)
            {
                // RFC 9204 §4.5.4: Literal Field Line with Name Reference, 01 N T index(4+) then value.
                if ((first & 0x10) == 0)
                {
                    if (!TryReadDynamic(ref section, 4, postBase: false, table, requiredInsertCount, baseIndex, out HeaderField dynamicEntry, ref largestReference, out reason))
                    {
                        return Http3ErrorCode.QpackDecompressionFailed;
                    }

                    name = dynamicEntry.Name;
                }
                else
                {
                    if (!TryReadStaticIndex(ref section, 4, out int index))
                    {
                        return Fail(out reason, "invalid static table name index");
                    }

                    name = QpackStaticTable.Get(index).Name;
                }

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
            else if ((first & 0x10) != 0)
            {
                // RFC 9204 §4.5.3: Indexed Field Line with Post-Base Index, 0001 index(4+).
                if (!TryReadDynamic(ref section, 4, postBase: true, table, requiredInsertCount, baseIndex, out HeaderField dynamicEntry, ref largestReference, out reason))
                {
                    return Http3ErrorCode.QpackDecompressionFailed;
                }

                name = dynamicEntry.Name;
                value = dynamicEntry.Value;
            }
            else
            {
                // RFC 9204 §4.5.5: Literal Field Line with Post-Base Name Reference, 0000 N index(3+), then value.
                if (!TryReadDynamic(ref section, 3, postBase: true, table, requiredInsertCount, baseIndex, out HeaderField dynamicEntry, ref largestReference, out reason))
                {
                    return Http3ErrorCode.QpackDecompressionFailed;
                }

                name = dynamicEntry.Name;
                Http3ErrorCode valueError = TryReadString(ref section, 7, 0x80, maxFieldSectionSize - totalSize, out value, out reason);
                if (valueError != Http3ErrorCode.NoError)
                {
                    return valueError;
                }
            }

            totalSize += name.Length + value.Length + 32L;
            if (totalSize > maxFieldSectionSize)
            {
                reason = "field section exceeds the advertised SETTINGS_MAX_FIELD_SECTION_SIZE";
                return Http3ErrorCode.ExcessiveLoad;
            }

            fields.Add(new HeaderField(name, value));
        }

        // RFC 9204 §2.1.2/§4.5.1.1: the encoder sets the Required Insert Count to one more than the largest absolute index it
        // references; a larger one would block the stream for nothing.
        if (requiredInsertCount > 0 && largestReference + 1 != requiredInsertCount)
        {
            return Fail(out reason, "Required Insert Count larger than the dynamic references need");
        }

        return Http3ErrorCode.NoError;
    }

    /// <summary>
    /// A relative (absolute = Base - 1 - index) or post-base (absolute = Base + index) dynamic reference (§3.2.5, §3.2.6);
    /// it must lie below the Required Insert Count and still be in the table (§2.2.3, §4.5).
    /// </summary>
    private static bool TryReadDynamic(ref ReadOnlySpan<byte> section, int prefixBits, bool postBase, QpackDynamicTable? table,
        long requiredInsertCount, long baseIndex, out HeaderField entry, ref long largestReference, out string? reason)
    {
        entry = default;
        reason = null;
        if (table is null || requiredInsertCount == 0)
        {
            reason = postBase ? "post-base reference to the dynamic table" : "field line references the dynamic table but the Required Insert Count is 0";
            return false;
        }

        if (PrefixedInteger.TryDecode(section, prefixBits, out ulong index, out int consumed) != PrefixedIntegerStatus.Done)
        {
            reason = "truncated or oversized dynamic table index";
            return false;
        }

        section = section.Slice(consumed);
        long absolute;
        if (postBase)
        {
            if (index >= (ulong)requiredInsertCount)
            {
                reason = "post-base index at or beyond the Required Insert Count";
                return false;
            }

            absolute = baseIndex + (long)index;
        }
        else
        {
            if (index >= (ulong)baseIndex)
            {
                reason = "relative index refers before the start of the table";
                return false;
            }

            absolute = baseIndex - 1 - (long)index;
        }

        if (absolute >= requiredInsertCount)
        {
            reason = "dynamic reference at or beyond the Required Insert Count";
            return false;
        }

        if (!table.TryGet(absolute, out entry))
        {
            reason = "dynamic reference to an evicted entry";
            return false;
        }

        largestReference = Math.Max(largestReference, absolute);
        return true;
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
