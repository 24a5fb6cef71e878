namespace System.Net.Quic.Managed.Wire;

/// <summary>The kinds of QUIC packet, independent of the version's type-bit encoding. RFC 9000 §17.</summary>
internal enum PacketType : byte
{
    Initial,
    ZeroRtt,
    Handshake,
    Retry,
    /// <summary>A long header with version 0. RFC 9000 §17.2.1.</summary>
    VersionNegotiation,
    /// <summary>A short header packet. RFC 9000 §17.3.1.</summary>
    OneRtt,
    /// <summary>A long header packet of a version this endpoint does not speak: only the RFC 8999 invariants are known.</summary>
    UnsupportedVersion,
}
