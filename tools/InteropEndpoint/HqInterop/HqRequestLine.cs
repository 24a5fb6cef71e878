using System.Text;

namespace QuicManaged.Interop.HqInterop;

/// <summary>Parses the hq-interop request line "GET /path" (optionally followed by CR LF).</summary>
internal static class HqRequestLine
{
    public const int MaxLength = 8 * 1024;

    public static bool TryParse(ReadOnlySpan<byte> line, out string path)
    {
        path = string.Empty;
        int end = line.IndexOf((byte)'\n');
        if (end >= 0)
        {
            line = line.Slice(0, end);
        }

        if (!line.IsEmpty && line[^1] == (byte)'\r')
        {
            line = line.Slice(0, line.Length - 1);
        }

        ReadOnlySpan<byte> prefix = "GET "u8;
        if (!line.StartsWith(prefix))
        {
            return false;
        }

        ReadOnlySpan<byte> target = line.Slice(prefix.Length).Trim((byte)' ');
        if (target.IsEmpty || target[0] != (byte)'/' || target.IndexOfAny((byte)' ', (byte)0) >= 0)
        {
            return false;
        }

        path = Encoding.ASCII.GetString(target);
        return true;
    }
}
