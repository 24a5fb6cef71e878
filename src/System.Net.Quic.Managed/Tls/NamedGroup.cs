namespace System.Net.Quic.Managed.Tls;

/// <summary>Key exchange groups supported by this engine (RFC 8446 §4.2.7).</summary>
internal enum NamedGroup : ushort
{
    Secp256r1 = 0x0017,
    Secp384r1 = 0x0018,
    X25519 = 0x001d,
}
