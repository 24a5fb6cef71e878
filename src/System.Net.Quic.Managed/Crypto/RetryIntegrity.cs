using System.Buffers;
using System.Net.Quic.Managed.Wire;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Retry Integrity Tag (RFC 9001 §5.8; RFC 9369 §3.3.3): AEAD_AES_128_GCM with a fixed per-version key and nonce,
/// empty plaintext, and the Retry Pseudo-Packet (ODCID length, ODCID, Retry packet without the tag) as AAD.
/// </summary>
internal static class RetryIntegrity
{
    public const int TagLength = 16;

    /// <summary>RFC 9000 §17.2: connection IDs are at most 20 bytes in versions 1 and 2.</summary>
    public const int MaxConnectionIdLength = 20;

    // Pseudo-packets up to this size are built on the stack; larger ones (long tokens) use a pooled buffer.
    private const int StackPseudoPacketLimit = 512;

    // AesGcm instances are not safe for concurrent use; one per thread and version avoids per-Retry allocation.
    [ThreadStatic] private static AesGcm? t_v1;
    [ThreadStatic] private static AesGcm? t_v2;

    /// <summary>
    /// Computes the 16-byte tag for <paramref name="retryWithoutTag"/> (the Retry packet from its first byte through
    /// the Retry Token). Returns false if the version is unsupported or the ODCID is longer than 20 bytes.
    /// </summary>
    public static bool TryComputeTag(uint version, ReadOnlySpan<byte> originalDestinationConnectionId, ReadOnlySpan<byte> retryWithoutTag, Span<byte> tag)
    {
        if (!QuicVersion.IsSupported(version) || originalDestinationConnectionId.Length > MaxConnectionIdLength || tag.Length < TagLength) return false;

        int pseudoLength = 1 + originalDestinationConnectionId.Length + retryWithoutTag.Length;
        byte[]? rented = null;
        Span<byte> pseudo = pseudoLength <= StackPseudoPacketLimit
            ? stackalloc byte[StackPseudoPacketLimit]
            : (rented = ArrayPool<byte>.Shared.Rent(pseudoLength));
        pseudo = pseudo.Slice(0, pseudoLength);
        try
        {
            // RFC 9001 §5.8: Retry Pseudo-Packet = ODCID Length (8), ODCID, then the Retry packet minus its tag.
            pseudo[0] = (byte)originalDestinationConnectionId.Length;
            originalDestinationConnectionId.CopyTo(pseudo.Slice(1));
            retryWithoutTag.CopyTo(pseudo.Slice(1 + originalDestinationConnectionId.Length));
            GetAead(version).Encrypt(VersionCryptoParameters.GetRetryNonce(version), ReadOnlySpan<byte>.Empty, Span<byte>.Empty, tag.Slice(0, TagLength), pseudo);
            return true;
        }
        finally
        {
            if (rented is not null) ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Verifies the tag at the end of <paramref name="retryPacket"/> (the whole Retry packet including its 16-byte
    /// tag) in constant time. Returns false for a wrong tag, a packet too short to hold one, an ODCID over 20 bytes
    /// or an unsupported version.
    /// </summary>
    public static bool Verify(uint version, ReadOnlySpan<byte> originalDestinationConnectionId, ReadOnlySpan<byte> retryPacket)
    {
        if (retryPacket.Length < TagLength + 1) return false;
        Span<byte> expected = stackalloc byte[TagLength];
        if (!TryComputeTag(version, originalDestinationConnectionId, retryPacket.Slice(0, retryPacket.Length - TagLength), expected)) return false;
        return CryptographicOperations.FixedTimeEquals(expected, retryPacket.Slice(retryPacket.Length - TagLength));
    }

    private static AesGcm GetAead(uint version)
    {
        if (version == QuicVersion.V1)
        {
            return t_v1 ??= new AesGcm(VersionCryptoParameters.GetRetryKey(QuicVersion.V1), TagLength);
        }
        return t_v2 ??= new AesGcm(VersionCryptoParameters.GetRetryKey(QuicVersion.V2), TagLength);
    }
}
