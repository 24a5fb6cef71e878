namespace System.Net.Quic.Managed.Wire;

/// <summary>PADDING frames: single zero bytes. RFC 9000 §19.1.</summary>
internal static class PaddingFrame
{
    /// <summary>Consumes the run of zero bytes that follows a PADDING frame type and returns how many bytes the
    /// padding took in total, counting the type byte already read.</summary>
    public static int SkipRun(ref QuicReader reader)
    {
        ReadOnlySpan<byte> rest = reader.RemainingSpan;
        int zeros = rest.IndexOfAnyExcept((byte)0);
        if (zeros < 0)
        {
            zeros = rest.Length;
        }

        reader.TrySkip(zeros);
        return zeros + 1;
    }

    /// <summary>Writes <paramref name="length"/> PADDING frames.</summary>
    public static bool TryWrite(ref QuicWriter writer, int length) => writer.TryFill(0, length);
}
