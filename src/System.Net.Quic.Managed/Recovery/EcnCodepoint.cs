namespace System.Net.Quic.Managed.Recovery;

/// <summary>The two ECN bits of the IP header. RFC 3168 §5; used for RFC 9000 §13.4.</summary>
internal enum EcnCodepoint : byte
{
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}
