using System.Net.Security;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tls;

/// <summary>The hash each TLS 1.3 cipher suite uses for HKDF and the transcript (RFC 8446 §B.4).</summary>
internal static class CipherSuiteInfo
{
    public static bool IsSupported(TlsCipherSuite suite)
        => suite is TlsCipherSuite.TLS_AES_128_GCM_SHA256 or TlsCipherSuite.TLS_AES_256_GCM_SHA384 or TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256;

    public static HashAlgorithmName GetHash(TlsCipherSuite suite)
        => suite == TlsCipherSuite.TLS_AES_256_GCM_SHA384 ? HashAlgorithmName.SHA384 : HashAlgorithmName.SHA256;

    public static int GetHashLength(TlsCipherSuite suite)
        => suite == TlsCipherSuite.TLS_AES_256_GCM_SHA384 ? 48 : 32;

    public static int GetHashLength(HashAlgorithmName hash)
        => hash == HashAlgorithmName.SHA384 ? 48 : hash == HashAlgorithmName.SHA512 ? 64 : 32;
}
