using System.Text;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Hex and printable renderings of bytes for the packet log.</summary>
internal static class HexText
{
    public static string Of(ReadOnlySpan<byte> bytes) => bytes.IsEmpty ? "(empty)" : Convert.ToHexStringLower(bytes);

    /// <summary>The first <paramref name="max"/> bytes as hex, with "..." when there are more.</summary>
    public static string Prefix(ReadOnlySpan<byte> bytes, int max)
    {
        if (bytes.IsEmpty) return "(empty)";
        return bytes.Length <= max ? Convert.ToHexStringLower(bytes) : Convert.ToHexStringLower(bytes.Slice(0, max)) + "...";
    }

    /// <summary>A short preview: quoted text when the bytes are printable ASCII, hex otherwise.</summary>
    public static string Preview(ReadOnlySpan<byte> bytes, int max)
    {
        if (bytes.IsEmpty) return "(empty)";
        ReadOnlySpan<byte> head = bytes.Length <= max ? bytes : bytes.Slice(0, max);
        bool printable = true;
        foreach (byte b in head)
        {
            if (b is not ((>= 0x20 and < 0x7f) or (byte)'\r' or (byte)'\n' or (byte)'\t'))
            {
                printable = false;
                break;
            }
        }

        string more = head.Length < bytes.Length ? "..." : "";
        if (!printable) return "hex " + Convert.ToHexStringLower(head) + more;
        var sb = new StringBuilder(head.Length + 4);
        sb.Append('"');
        foreach (byte b in head)
        {
            switch (b)
            {
                case (byte)'\r': sb.Append("\\r"); break;
                case (byte)'\n': sb.Append("\\n"); break;
                case (byte)'\t': sb.Append("\\t"); break;
                case (byte)'"': sb.Append("\\\""); break;
                case (byte)'\\': sb.Append("\\\\"); break;
                default: sb.Append((char)b); break;
            }
        }

        sb.Append('"').Append(more);
        return sb.ToString();
    }

    /// <summary>Parses hex ignoring whitespace, ':' and '-' separators and an optional 0x prefix. False on anything else.</summary>
    public static bool TryParse(string text, out byte[] bytes)
    {
        bytes = [];
        var sb = new StringBuilder(text.Length);
        string trimmed = text.Trim();
        if (trimmed.StartsWith("0x", StringComparison.OrdinalIgnoreCase)) trimmed = trimmed.Substring(2);
        foreach (char c in trimmed)
        {
            if (char.IsWhiteSpace(c) || c == ':' || c == '-') continue;
            if (!char.IsAsciiHexDigit(c)) return false;
            sb.Append(c);
        }

        if (sb.Length % 2 != 0) return false;
        bytes = Convert.FromHexString(sb.ToString());
        return true;
    }
}
