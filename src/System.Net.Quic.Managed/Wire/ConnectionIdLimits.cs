namespace System.Net.Quic.Managed.Wire;

/// <summary>Connection ID length bounds.</summary>
internal static class ConnectionIdLimits
{
    /// <summary>QUIC v1 and v2 connection IDs are at most 20 bytes. RFC 9000 §17.2.</summary>
    public const int MaxLength = 20;

    /// <summary>The version-independent bound: the length is one byte. RFC 8999 §5.1.</summary>
    public const int MaxInvariantLength = 255;
}
