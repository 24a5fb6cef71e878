namespace System.Net.Quic.Managed.Tls;

/// <summary>TLS extension code points used by this engine (RFC 8446 §4.2, RFC 6066, RFC 7301, RFC 9001 §8.2).</summary>
internal enum ExtensionType : ushort
{
    ServerName = 0,
    SupportedGroups = 10,
    SignatureAlgorithms = 13,
    ApplicationLayerProtocolNegotiation = 16,
    PreSharedKey = 41,
    EarlyData = 42,
    SupportedVersions = 43,
    Cookie = 44,
    PskKeyExchangeModes = 45,
    CertificateAuthorities = 47,
    SignatureAlgorithmsCert = 50,
    KeyShare = 51,
    QuicTransportParameters = 0x39,
}
