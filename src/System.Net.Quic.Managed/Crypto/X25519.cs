namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// X25519 Diffie-Hellman (RFC 7748 §5), written here because .NET has no X25519.
/// Constant-time field arithmetic over GF(2^255 - 19).
/// </summary>
internal static class X25519
{
    /// <summary>Length of scalars, u-coordinates and shared secrets in bytes.</summary>
    public const int KeySize = 32;

    /// <summary>X25519(scalar, u): writes the 32-byte result into <paramref name="result"/>. Clamps the scalar per RFC 7748 §5.</summary>
    public static void ScalarMult(ReadOnlySpan<byte> scalar, ReadOnlySpan<byte> uCoordinate, Span<byte> result)
        => throw new NotImplementedException("X25519 is not implemented yet.");

    /// <summary>Computes the public key X25519(privateKey, 9).</summary>
    public static void GetPublicKey(ReadOnlySpan<byte> privateKey, Span<byte> publicKey)
        => throw new NotImplementedException("X25519 is not implemented yet.");

    /// <summary>
    /// Computes the shared secret. Returns false when the result is all zeros (a small-order peer key),
    /// which RFC 7748 §6.1 and RFC 8446 §7.4.2 require to be rejected.
    /// </summary>
    public static bool TryComputeSharedSecret(ReadOnlySpan<byte> privateKey, ReadOnlySpan<byte> peerPublicKey, Span<byte> sharedSecret)
        => throw new NotImplementedException("X25519 is not implemented yet.");
}
