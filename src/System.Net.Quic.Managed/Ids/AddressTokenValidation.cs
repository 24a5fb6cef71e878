namespace System.Net.Quic.Managed.Ids;

/// <summary>The outcome of checking a client's token (RFC 9000 §8.1.3, §8.1.4).</summary>
internal enum AddressTokenValidation
{
    Valid,

    /// <summary>Not one of ours, tampered with, or bound to another address. A Retry token like this closes with INVALID_TOKEN.</summary>
    Invalid,

    /// <summary>Ours, but past its lifetime: treat as no token.</summary>
    Expired,
}
