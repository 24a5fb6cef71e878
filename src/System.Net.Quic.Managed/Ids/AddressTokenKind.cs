namespace System.Net.Quic.Managed.Ids;

/// <summary>What an address validation token was issued in (RFC 9000 §8.1.3).</summary>
internal enum AddressTokenKind : byte
{
    /// <summary>In a Retry packet: valid briefly, bound to the client's IP address and port.</summary>
    Retry = 1,

    /// <summary>In a NEW_TOKEN frame: valid longer, bound to the client's IP address only (ports change across connections).</summary>
    NewToken = 2,
}
