using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Wire;

/// <summary>Stateless Reset recognition and construction. RFC 9000 §10.3.</summary>
internal static class StatelessReset
{
    public const int TokenLength = 16;

    /// <summary>First byte, then at least 38 unpredictable bits, then the token: 21 bytes. RFC 9000 §10.3.</summary>
    public const int MinimumLength = 21;

    /// <summary>The last 16 bytes of a datagram, which an endpoint compares against the reset tokens it holds when the
    /// datagram could not be processed. RFC 9000 §10.3.1. False when the datagram is too short to be a reset.</summary>
    public static bool TryGetTokenCandidate(ReadOnlySpan<byte> datagram, out ReadOnlySpan<byte> token)
    {
        if (datagram.Length < MinimumLength)
        {
            token = default;
            return false;
        }

        token = datagram.Slice(datagram.Length - TokenLength);
        return true;
    }

    /// <summary>Compares a candidate with a known token in constant time, as RFC 9000 §10.3.1 requires.</summary>
    public static bool TokenEquals(ReadOnlySpan<byte> candidate, ReadOnlySpan<byte> token) =>
        candidate.Length == TokenLength && token.Length == TokenLength && CryptographicOperations.FixedTimeEquals(candidate, token);

    /// <summary>
    /// Turns <paramref name="destination"/>, which the caller has filled with unpredictable bytes (Wire holds no random
    /// source), into a Stateless Reset: a short-header-looking first byte (0b01 then random bits), the random bytes, and
    /// the token at the end. RFC 9000 §10.3.
    /// </summary>
    public static bool TryWrite(Span<byte> destination, ReadOnlySpan<byte> token)
    {
        if (destination.Length < MinimumLength || token.Length != TokenLength)
        {
            return false;
        }

        destination[0] = (byte)(PacketFirstByte.FixedBit | (destination[0] & 0x3f));
        token.CopyTo(destination.Slice(destination.Length - TokenLength));
        return true;
    }
}
