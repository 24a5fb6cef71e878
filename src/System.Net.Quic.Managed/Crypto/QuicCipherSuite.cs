using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Crypto;

/// <summary>
/// Per-cipher-suite parameters for QUIC packet protection (RFC 9001 §5.1, §5.3, §6.6).
/// Only the three TLS 1.3 suites QUIC implementations actually negotiate are supported;
/// TLS_AES_128_CCM_SHA256 is deliberately not offered (no AES-CCM header protection here).
/// </summary>
internal static class QuicCipherSuite
{
    /// <summary>AEAD tag length for every supported suite (RFC 9001 §5.3: all are 16 bytes).</summary>
    public const int TagLength = 16;

    /// <summary>AEAD nonce / IV length for every supported suite (RFC 8446 §5.3: max(8, N_MIN) = 12).</summary>
    public const int IvLength = 12;

    /// <summary>RFC 9001 §6.6: AEAD_AES_128_GCM / AEAD_AES_256_GCM confidentiality limit, 2^23 packets.</summary>
    public const long AesGcmConfidentialityLimit = 1L << 23;

    /// <summary>RFC 9001 §6.6: AEAD_AES_128_GCM / AEAD_AES_256_GCM integrity limit, 2^52 failed decryptions.</summary>
    public const long AesGcmIntegrityLimit = 1L << 52;

    /// <summary>
    /// RFC 9001 §6.6: the AEAD_CHACHA20_POLY1305 confidentiality limit is greater than the number of possible
    /// packets (2^62), so no limit applies; long.MaxValue expresses "never reached".
    /// </summary>
    public const long ChaCha20Poly1305ConfidentialityLimit = long.MaxValue;

    /// <summary>RFC 9001 §6.6: AEAD_CHACHA20_POLY1305 integrity limit, 2^36 failed decryptions.</summary>
    public const long ChaCha20Poly1305IntegrityLimit = 1L << 36;

    public static bool IsSupported(TlsCipherSuite suite) => suite is
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 or
        TlsCipherSuite.TLS_AES_256_GCM_SHA384 or
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256;

    /// <summary>AEAD key length, which is also the header protection key length (RFC 9001 §5.4.3, §5.4.4).</summary>
    public static int GetKeyLength(TlsCipherSuite suite) => suite switch
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 => 16,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384 => 32,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => 32,
        _ => throw Unsupported(suite),
    };

    /// <summary>The suite's hash, used for HKDF (RFC 8446 §7.1).</summary>
    public static HashAlgorithmName GetHashAlgorithm(TlsCipherSuite suite) => suite switch
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 => HashAlgorithmName.SHA256,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384 => HashAlgorithmName.SHA384,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => HashAlgorithmName.SHA256,
        _ => throw Unsupported(suite),
    };

    /// <summary>Traffic secret length = hash output length (RFC 8446 §7.1; RFC 9001 §6.1 "Hash.length").</summary>
    public static int GetSecretLength(TlsCipherSuite suite) => suite switch
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 => 32,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384 => 48,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => 32,
        _ => throw Unsupported(suite),
    };

    /// <summary>RFC 9001 §6.6: packets that may be protected with one key before a key update is required.</summary>
    public static long GetConfidentialityLimit(TlsCipherSuite suite) => suite switch
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 or TlsCipherSuite.TLS_AES_256_GCM_SHA384 => AesGcmConfidentialityLimit,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => ChaCha20Poly1305ConfidentialityLimit,
        _ => throw Unsupported(suite),
    };

    /// <summary>RFC 9001 §6.6: failed decryptions across all keys of a connection before it must be closed.</summary>
    public static long GetIntegrityLimit(TlsCipherSuite suite) => suite switch
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256 or TlsCipherSuite.TLS_AES_256_GCM_SHA384 => AesGcmIntegrityLimit,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 => ChaCha20Poly1305IntegrityLimit,
        _ => throw Unsupported(suite),
    };

    private static ArgumentOutOfRangeException Unsupported(TlsCipherSuite suite)
        => new(nameof(suite), suite, "Cipher suite is not supported for QUIC packet protection.");
}
