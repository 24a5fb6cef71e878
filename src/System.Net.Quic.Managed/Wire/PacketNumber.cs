namespace System.Net.Quic.Managed.Wire;

/// <summary>Packet number truncation and reconstruction. RFC 9000 §17.1 and Appendix A.2/A.3.</summary>
internal static class PacketNumber
{
    /// <summary>Packet numbers are in 0..2^62-1. RFC 9000 §12.3.</summary>
    public const long MaxValue = (1L << 62) - 1;

    /// <summary>Bytes needed to send <paramref name="packetNumber"/> so that a peer which has seen
    /// <paramref name="largestAcknowledged"/> (or -1 when nothing was acknowledged) reconstructs it. RFC 9000 Appendix A.2:
    /// the encoding covers more than twice the number of unacknowledged packets.</summary>
    public static int GetEncodedLength(long packetNumber, long largestAcknowledged)
    {
        // num_unacked = full_pn - largest_acked, or full_pn + 1 when none; bits = log2(num_unacked) + 1, so a
        // k-byte encoding suffices exactly when num_unacked <= 2^(8k-1).
        ulong unacked = largestAcknowledged < 0
            ? (ulong)packetNumber + 1
            : (ulong)(packetNumber - largestAcknowledged);
        if (unacked <= 1UL << 7)
        {
            return 1;
        }

        if (unacked <= 1UL << 15)
        {
            return 2;
        }

        return unacked <= 1UL << 23 ? 3 : 4;
    }

    /// <summary>Writes the low <paramref name="length"/> bytes of <paramref name="packetNumber"/> big-endian.</summary>
    public static bool TryWrite(ref QuicWriter writer, long packetNumber, int length)
    {
        if (length < 1 || length > 4 || !writer.TryReserve(length, out Span<byte> field))
        {
            return false;
        }

        Write(field, packetNumber);
        return true;
    }

    /// <summary>Fills <paramref name="field"/> (1..4 bytes) with the low bytes of <paramref name="packetNumber"/>.</summary>
    public static void Write(Span<byte> field, long packetNumber)
    {
        for (int i = field.Length - 1; i >= 0; i--)
        {
            field[i] = (byte)packetNumber;
            packetNumber >>= 8;
        }
    }

    /// <summary>Reads a truncated packet number of 1..4 bytes (after header protection is removed).</summary>
    public static uint ReadTruncated(ReadOnlySpan<byte> field)
    {
        uint value = 0;
        for (int i = 0; i < field.Length && i < 4; i++)
        {
            value = (value << 8) | field[i];
        }

        return value;
    }

    /// <summary>Reconstructs the full packet number closest to the next expected one. RFC 9000 Appendix A.3.</summary>
    /// <param name="largestPacketNumber">Largest packet number successfully processed in this space, or -1.</param>
    /// <param name="truncatedPacketNumber">The value read from the packet.</param>
    /// <param name="length">Encoded length in bytes (1..4).</param>
    public static long Decode(long largestPacketNumber, uint truncatedPacketNumber, int length)
    {
        int bits = length * 8;
        long expected = largestPacketNumber + 1;
        long window = 1L << bits;
        long halfWindow = window / 2;
        long mask = window - 1;
        long candidate = (expected & ~mask) | (truncatedPacketNumber & mask);

        // Signed arithmetic: expected - halfWindow may be negative for early packets, and that must not wrap.
        if (candidate <= expected - halfWindow && candidate < (1L << 62) - window)
        {
            return candidate + window;
        }

        if (candidate > expected + halfWindow && candidate >= window)
        {
            return candidate - window;
        }

        return candidate;
    }
}
