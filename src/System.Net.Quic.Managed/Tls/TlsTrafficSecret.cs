using System.Net.Security;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// A traffic secret that just became available (RFC 8446 §7.1): client_early_traffic_secret (EarlyData),
/// [sender]_handshake_traffic_secret (Handshake) or [sender]_application_traffic_secret_0 (OneRtt).
/// The QUIC core derives packet protection keys from it (RFC 9001 §5.1).
/// </summary>
internal readonly struct TlsTrafficSecret
{
    public TlsTrafficSecret(EncryptionLevel level, bool isClientSecret, bool isWrite, TlsCipherSuite cipherSuite, byte[] secret)
    {
        Level = level;
        IsClientSecret = isClientSecret;
        IsWrite = isWrite;
        CipherSuite = cipherSuite;
        Secret = secret;
    }

    public EncryptionLevel Level { get; }

    /// <summary>True for client_* secrets (protecting client-to-server packets), false for server_* secrets.</summary>
    public bool IsClientSecret { get; }

    /// <summary>True when the local endpoint encrypts with it (client secret on a client, server secret on a server).</summary>
    public bool IsWrite { get; }

    public TlsCipherSuite CipherSuite { get; }

    public byte[] Secret { get; }
}
