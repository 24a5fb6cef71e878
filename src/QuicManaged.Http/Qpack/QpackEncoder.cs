using System.Buffers;
using System.Text;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// QPACK field-section encoder that never uses the dynamic table (RFC 9204 §4.5): static indexed lines,
/// literals with a static name reference, and literals with a literal name; strings are Huffman-coded when shorter.
/// </summary>
internal static class QpackEncoder
{
    /// <summary>Upper bound on the encoded size of <paramref name="fields"/>.</summary>
    public static int GetMaxEncodedLength(IReadOnlyList<HeaderField> fields)
    {
        // Prefix (2 bytes) + per line: 10-byte integers for name and value lengths plus the raw strings.
        long total = 2;
        for (int i = 0; i < fields.Count; i++)
        {
            total += GetMaxEncodedLength(fields[i].Name, fields[i].Value);
        }

        return checked((int)total);
    }

    /// <summary>Upper bound on the encoded size of one field line: 10-byte integers for name and value lengths plus the raw strings.</summary>
    public static int GetMaxEncodedLength(string name, string value) => checked(20 + name.Length + value.Length);

    public static byte[] Encode(IReadOnlyList<HeaderField> fields)
    {
        byte[] buffer = new byte[GetMaxEncodedLength(fields)];
        int written = Encode(fields, buffer);
        return buffer.AsSpan(0, written).ToArray();
    }

    /// <summary>Encodes a whole field section (prefix included). Returns bytes written, or -1 when too small.</summary>
    public static int Encode(IReadOnlyList<HeaderField> fields, Span<byte> destination)
    {
        // RFC 9204 §4.5.1: Required Insert Count 0 and Delta Base 0 (sign 0) since no dynamic entry is referenced.
        if (destination.Length < 2)
        {
            return -1;
        }

        destination[0] = 0;
        destination[1] = 0;
        int offset = 2;
        for (int i = 0; i < fields.Count; i++)
        {
            int n = EncodeLine(fields[i], destination.Slice(offset));
            if (n < 0)
            {
                return -1;
            }

            offset += n;
        }

        return offset;
    }

    /// <summary>Encodes one field line. Returns bytes written, or -1 when <paramref name="destination"/> is too small.</summary>
    public static int EncodeLine(HeaderField field, Span<byte> destination)
    {
        QpackStaticTable.Find(field.Name, field.Value, out int exactIndex, out int nameIndex);
        if (exactIndex >= 0)
        {
            // RFC 9204 §4.5.2: Indexed Field Line, 1 T=1 index(6+).
            return PrefixedInteger.Encode((ulong)exactIndex, 6, 0xC0, destination);
        }

        int offset;
        if (nameIndex >= 0)
        {
            // RFC 9204 §4.5.4: Literal Field Line with Name Reference, 01 N=0 T=1 index(4+).
            offset = PrefixedInteger.Encode((ulong)nameIndex, 4, 0x50, destination);
        }
        else
        {
            // RFC 9204 §4.5.6: Literal Field Line with Literal Name, 001 N=0 H name-length(3+).
            offset = EncodeString(field.Name, 3, 0x20, 0x08, destination);
        }

        if (offset < 0)
        {
            return -1;
        }

        int valueLength = EncodeString(field.Value, 7, 0x00, 0x80, destination.Slice(offset));
        return valueLength < 0 ? -1 : offset + valueLength;
    }

    private static int EncodeString(string text, int prefixBits, byte flags, byte huffmanFlag, Span<byte> destination)
    {
        byte[]? rented = null;
        Span<byte> raw = text.Length <= 256 ? stackalloc byte[256] : (rented = ArrayPool<byte>.Shared.Rent(text.Length));
        try
        {
            raw = raw.Slice(0, Encoding.Latin1.GetBytes(text, raw));
            int huffmanLength = HuffmanCode.GetEncodedLength(raw);
            if (huffmanLength < raw.Length)
            {
                int header = PrefixedInteger.Encode((ulong)huffmanLength, prefixBits, (byte)(flags | huffmanFlag), destination);
                if (header < 0)
                {
                    return -1;
                }

                int body = HuffmanCode.Encode(raw, destination.Slice(header));
                return body < 0 ? -1 : header + body;
            }
            else
            {
                int header = PrefixedInteger.Encode((ulong)raw.Length, prefixBits, flags, destination);
                if (header < 0 || destination.Length - header < raw.Length)
                {
                    return -1;
                }

                raw.CopyTo(destination.Slice(header));
                return header + raw.Length;
            }
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
