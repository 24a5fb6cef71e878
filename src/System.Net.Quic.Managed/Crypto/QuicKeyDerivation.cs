using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Derivation of QUIC packet protection material from TLS traffic secrets
/// (RFC 9001 §5.1 key/iv/hp, §5.2 Initial secrets, §6.1 key update; RFC 9369 §3.3 for version 2).
/// </summary>
internal static class QuicKeyDerivation
{
    /// <summary>Initial secrets always use SHA-256 and are 32 bytes (RFC 9001 §5.2).</summary>
    public const int InitialSecretLength = 32;

    /// <summary>
    /// RFC 9001 §5.2: initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id), then the client and
    /// server Initial secrets are HKDF-Expand-Label(initial_secret, "client in"/"server in", "", 32).
    /// </summary>
    public static void DeriveInitialSecrets(uint version, ReadOnlySpan<byte> clientDestinationConnectionId, Span<byte> clientSecret, Span<byte> serverSecret)
    {
        if (clientSecret.Length != InitialSecretLength) throw new ArgumentException("Secret must be 32 bytes.", nameof(clientSecret));
        if (serverSecret.Length != InitialSecretLength) throw new ArgumentException("Secret must be 32 bytes.", nameof(serverSecret));
        Span<byte> initialSecret = stackalloc byte[InitialSecretLength];
        HkdfLabel.Extract(HashAlgorithmName.SHA256, clientDestinationConnectionId, VersionCryptoParameters.GetInitialSalt(version), initialSecret);
        // RFC 9369 §3.3.2 changes only the "quic ..." labels; "client in"/"server in" are the same in v2.
        HkdfLabel.Expand(HashAlgorithmName.SHA256, initialSecret, "client in"u8, default, clientSecret);
        HkdfLabel.Expand(HashAlgorithmName.SHA256, initialSecret, "server in"u8, default, serverSecret);
        CryptographicOperations.ZeroMemory(initialSecret);
    }

    /// <summary>
    /// RFC 9001 §5.1: key = HKDF-Expand-Label(secret, "quic key", "", key_len), iv = (..."quic iv", 12),
    /// hp = (..."quic hp", key_len), with "quicv2 ..." labels for version 2 (RFC 9369 §3.3.2).
    /// </summary>
    public static void DerivePacketKeys(ReadOnlySpan<byte> secret, TlsCipherSuite suite, uint version, Span<byte> key, Span<byte> iv, Span<byte> headerProtectionKey)
    {
        int keyLength = QuicCipherSuite.GetKeyLength(suite);
        if (key.Length != keyLength) throw new ArgumentException("Key length does not match the cipher suite.", nameof(key));
        if (iv.Length != QuicCipherSuite.IvLength) throw new ArgumentException("IV must be 12 bytes.", nameof(iv));
        if (headerProtectionKey.Length != keyLength) throw new ArgumentException("HP key length does not match the cipher suite.", nameof(headerProtectionKey));
        HashAlgorithmName hash = QuicCipherSuite.GetHashAlgorithm(suite);
        HkdfLabel.Expand(hash, secret, VersionCryptoParameters.GetKeyLabel(version), default, key);
        HkdfLabel.Expand(hash, secret, VersionCryptoParameters.GetIvLabel(version), default, iv);
        HkdfLabel.Expand(hash, secret, VersionCryptoParameters.GetHeaderProtectionLabel(version), default, headerProtectionKey);
    }

    /// <summary>
    /// RFC 9001 §6.1: secret_&lt;n+1&gt; = HKDF-Expand-Label(secret_&lt;n&gt;, "quic ku", "", Hash.length)
    /// ("quicv2 ku" for version 2, RFC 9369 §3.3.2). The header protection key is not updated.
    /// </summary>
    public static void DeriveNextSecret(ReadOnlySpan<byte> currentSecret, TlsCipherSuite suite, uint version, Span<byte> nextSecret)
    {
        int length = QuicCipherSuite.GetSecretLength(suite);
        if (currentSecret.Length != length) throw new ArgumentException("Secret length does not match the cipher suite.", nameof(currentSecret));
        if (nextSecret.Length != length) throw new ArgumentException("Secret length does not match the cipher suite.", nameof(nextSecret));
        HkdfLabel.Expand(QuicCipherSuite.GetHashAlgorithm(suite), currentSecret, VersionCryptoParameters.GetKeyUpdateLabel(version), default, nextSecret);
    }
}
