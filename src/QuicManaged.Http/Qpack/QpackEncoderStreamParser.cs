using System.Buffers;
using System.Text;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// Reads the peer's QPACK encoder stream (RFC 9204 §4.3) and applies each instruction to a <see cref="QpackDynamicTable"/>:
/// Set Dynamic Table Capacity, Insert With Name Reference (static or dynamic), Insert With Literal Name, Duplicate.
/// Instructions may arrive split anywhere; a partial one is kept until the rest arrives. Nothing is sized by a length
/// read off the wire before that length is checked against what the table could hold, so the pending bytes are bounded
/// by a few times the advertised capacity. Any violation is QPACK_ENCODER_STREAM_ERROR. Not thread-safe.
/// </summary>
internal sealed class QpackEncoderStreamParser
{
    private readonly QpackDynamicTable _table;
    private byte[] _pending = [];
    private int _pendingLength;

    public QpackEncoderStreamParser(QpackDynamicTable table)
    {
        _table = table;
    }

    /// <summary>Encoder-stream bytes received so far.</summary>
    public long BytesReceived { get; private set; }

    /// <summary>Largest number of bytes ever held for an incomplete instruction (for tests of the memory bound).</summary>
    public int MaxPendingBytes { get; private set; }

    /// <summary>
    /// Applies every complete instruction in <paramref name="data"/> (after what was pending). False on a violation,
    /// with <paramref name="reason"/>; the connection must then close with QPACK_ENCODER_STREAM_ERROR.
    /// </summary>
    public bool Process(ReadOnlySpan<byte> data, out string? reason)
    {
        reason = null;
        BytesReceived += data.Length;
        if (_pendingLength == 0)
        {
            if (!ProcessInstructions(data, out int consumed, out reason))
            {
                return false;
            }

            Keep(data.Slice(consumed));
            return true;
        }

        EnsurePending(_pendingLength + data.Length);
        data.CopyTo(_pending.AsSpan(_pendingLength));
        _pendingLength += data.Length;
        if (!ProcessInstructions(_pending.AsSpan(0, _pendingLength), out int used, out reason))
        {
            return false;
        }

        _pending.AsSpan(used, _pendingLength - used).CopyTo(_pending);
        _pendingLength -= used;
        MaxPendingBytes = Math.Max(MaxPendingBytes, _pendingLength);
        return true;
    }

    private void Keep(ReadOnlySpan<byte> rest)
    {
        if (rest.IsEmpty)
        {
            return;
        }

        EnsurePending(rest.Length);
        rest.CopyTo(_pending);
        _pendingLength = rest.Length;
        MaxPendingBytes = Math.Max(MaxPendingBytes, _pendingLength);
    }

    private void EnsurePending(int length)
    {
        if (_pending.Length < length)
        {
            Array.Resize(ref _pending, Math.Max(length, Math.Max(64, _pending.Length * 2)));
        }
    }

    private bool ProcessInstructions(ReadOnlySpan<byte> input, out int consumed, out string? reason)
    {
        consumed = 0;
        reason = null;
        while (consumed < input.Length)
        {
            ParseStatus status = TryApplyOne(input.Slice(consumed), out int length, out reason);
            if (status == ParseStatus.Error)
            {
                return false;
            }

            if (status == ParseStatus.Incomplete)
            {
                return true;
            }

            consumed += length;
        }

        return true;
    }

    private ParseStatus TryApplyOne(ReadOnlySpan<byte> input, out int consumed, out string? reason)
    {
        consumed = 0;
        reason = null;
        byte first = input[0];
        ParseStatus status;
        if ((first & 0x80) != 0)
        {
            // §4.3.2 Insert with Name Reference: 1 T index(6+), value string (H, 7+).
            status = ReadInteger(input, ref consumed, 6, out ulong index, out reason);
            if (status != ParseStatus.Done)
            {
                return status;
            }

            HeaderField nameEntry;
            if ((first & 0x40) != 0)
            {
                if (index >= QpackStaticTable.Count)
                {
                    reason = "Insert With Name Reference to a static index out of range";
                    return ParseStatus.Error;
                }

                nameEntry = QpackStaticTable.Get((int)index);
            }
            else if (!_table.TryGetByEncoderRelativeIndex(index, out nameEntry))
            {
                reason = "Insert With Name Reference to a dynamic entry that does not exist or was evicted";
                return ParseStatus.Error;
            }

            status = ReadString(input, ref consumed, 7, 0x80, _table.Capacity - 32 - nameEntry.Name.Length, out string value, out reason);
            return status != ParseStatus.Done ? status : Insert(new HeaderField(nameEntry.Name, value), out reason);
        }

        if ((first & 0x40) != 0)
        {
            // §4.3.3 Insert with Literal Name: 01 H name-length(5+), name, value string (H, 7+).
            status = ReadString(input, ref consumed, 5, 0x20, _table.Capacity - 32, out string name, out reason);
            if (status != ParseStatus.Done)
            {
                return status;
            }

            status = ReadString(input, ref consumed, 7, 0x80, _table.Capacity - 32 - name.Length, out string value, out reason);
            return status != ParseStatus.Done ? status : Insert(new HeaderField(name, value), out reason);
        }

        if ((first & 0x20) != 0)
        {
            // §4.3.1 Set Dynamic Table Capacity: 001 capacity(5+).
            status = ReadInteger(input, ref consumed, 5, out ulong capacity, out reason);
            if (status != ParseStatus.Done)
            {
                return status;
            }

            if (capacity > (ulong)_table.MaxCapacity || !_table.TrySetCapacity((long)capacity))
            {
                reason = $"Set Dynamic Table Capacity {capacity} exceeds SETTINGS_QPACK_MAX_TABLE_CAPACITY {_table.MaxCapacity}";
                return ParseStatus.Error;
            }

            return ParseStatus.Done;
        }

        // §4.3.4 Duplicate: 000 index(5+).
        status = ReadInteger(input, ref consumed, 5, out ulong relative, out reason);
        if (status != ParseStatus.Done)
        {
            return status;
        }

        if (!_table.TryGetByEncoderRelativeIndex(relative, out HeaderField duplicate))
        {
            reason = "Duplicate of a dynamic entry that does not exist or was evicted";
            return ParseStatus.Error;
        }

        return Insert(duplicate, out reason);
    }

    private ParseStatus Insert(HeaderField field, out string? reason)
    {
        reason = null;
        if (!_table.TryInsert(field))
        {
            reason = $"entry of {field.Size} bytes does not fit the dynamic table capacity {_table.Capacity}";
            return ParseStatus.Error;
        }

        return ParseStatus.Done;
    }

    private static ParseStatus ReadInteger(ReadOnlySpan<byte> input, ref int offset, int prefixBits, out ulong value, out string? reason)
    {
        reason = null;
        switch (PrefixedInteger.TryDecode(input.Slice(offset), prefixBits, out value, out int used))
        {
            case PrefixedIntegerStatus.Done:
                offset += used;
                return ParseStatus.Done;
            case PrefixedIntegerStatus.Incomplete:
                return ParseStatus.Incomplete;
            default:
                reason = "integer larger than 2^62 on the encoder stream";
                return ParseStatus.Error;
        }
    }

    /// <summary>
    /// A string literal (§4.1.2) whose decoded length may be at most <paramref name="maxLength"/> (what still fits the
    /// table). The encoded length is checked first: Huffman codes are at most 30 bits per octet, so more than
    /// 4 x maxLength + 1 encoded bytes cannot decode to something that fits.
    /// </summary>
    private static ParseStatus ReadString(ReadOnlySpan<byte> input, ref int offset, int prefixBits, byte huffmanFlag, long maxLength, out string text, out string? reason)
    {
        text = string.Empty;
        if (offset >= input.Length)
        {
            reason = null;
            return ParseStatus.Incomplete;
        }

        bool huffman = (input[offset] & huffmanFlag) != 0;
        int start = offset;
        ParseStatus status = ReadInteger(input, ref offset, prefixBits, out ulong length, out reason);
        if (status != ParseStatus.Done)
        {
            return status;
        }

        ulong maxEncoded = maxLength < 0 ? 0 : huffman ? ((ulong)maxLength * 4) + 1 : (ulong)maxLength;
        if (maxLength < 0 || length > maxEncoded)
        {
            reason = "string literal longer than the dynamic table capacity allows";
            return ParseStatus.Error;
        }

        if (length > (ulong)(input.Length - offset))
        {
            offset = start;
            return ParseStatus.Incomplete;
        }

        ReadOnlySpan<byte> raw = input.Slice(offset, (int)length);
        offset += (int)length;
        if (!huffman)
        {
            text = Encoding.Latin1.GetString(raw);
            return ParseStatus.Done;
        }

        int maxDecoded = (int)Math.Min((raw.Length * 8L / 5) + 1, maxLength + 1);
        byte[] rented = ArrayPool<byte>.Shared.Rent(Math.Max(1, maxDecoded));
        try
        {
            if (!HuffmanCode.TryDecode(raw, rented.AsSpan(0, maxDecoded), out int written) || written > maxLength)
            {
                reason = "invalid Huffman string, or one longer than the dynamic table capacity allows";
                return ParseStatus.Error;
            }

            text = Encoding.Latin1.GetString(rented, 0, written);
            return ParseStatus.Done;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private enum ParseStatus
    {
        Done,
        Incomplete,
        Error,
    }
}
