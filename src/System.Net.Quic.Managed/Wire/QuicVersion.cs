namespace System.Net.Quic.Managed.Wire;

/// <summary>QUIC version numbers as carried in the long header.</summary>
internal static class QuicVersion
{
    /// <summary>Version Negotiation packets carry version 0. RFC 9000 §17.2.1.</summary>
    public const uint Negotiation = 0x00000000;

    /// <summary>QUIC version 1. RFC 9000.</summary>
    public const uint V1 = 0x00000001;

    /// <summary>QUIC version 2. RFC 9369 §3.1.</summary>
    public const uint V2 = 0x6b3343cf;

    /// <summary>True for versions of the form 0x?a?a?a?a reserved for greasing negotiation. RFC 9000 §15.</summary>
    public static bool IsReserved(uint version) => (version & 0x0f0f0f0f) == 0x0a0a0a0a;

    /// <summary>True for the versions this implementation speaks.</summary>
    public static bool IsSupported(uint version) => version == V1 || version == V2;
}
