using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: the QUIC-LB configuration (draft-ietf-quic-load-balancers-21) the connection IDs of a
/// listener follow, so that a QUIC-LB-capable load balancer in front of several servers routes every packet of a
/// connection, including after the client's address changes, to the server that holds it. Every server behind the
/// balancer gets the same <see cref="ConfigRotation"/>, <see cref="NonceLength"/> and <see cref="Key"/> and its own
/// <see cref="ServerId"/> (all of the same length), and the balancer is configured with the same values.
/// See docs/SCALING.md.
/// </summary>
public sealed class QuicLoadBalancingOptions
{
    /// <summary>The config rotation codepoint, 0 to 6, in the three most significant bits of every ID (7 is reserved for unroutable IDs).</summary>
    public int ConfigRotation { get; set; }

    /// <summary>This server's ID: at least one octet, the same length on every server of the configuration. Mandatory.</summary>
    public ReadOnlyMemory<byte> ServerId { get; set; }

    /// <summary>Octets of nonce after the server ID: at least 4; server ID and nonce together at most 19 (18 with several listener sockets, which add one octet). Default 6.</summary>
    public int NonceLength { get; set; } = 6;

    /// <summary>
    /// Empty: plaintext IDs (the server ID is visible to observers, which links a client's addresses). Otherwise the
    /// 16-octet AES-128 key: one AES-ECB pass when server ID and nonce total 16 octets, the draft's four-pass Feistel
    /// network otherwise.
    /// </summary>
    public ReadOnlyMemory<byte> Key { get; set; }

    /// <summary>
    /// Write the length of the rest of the ID into the low five bits of the first octet (the draft's length
    /// self-description, for hardware offload); default false: those bits are random.
    /// </summary>
    public bool EncodeLength { get; set; }

    internal void Validate(string argumentName, int trailingLength)
        => QuicLbConnectionIdGenerator.Validate(ConfigRotation, ServerId.Length, NonceLength, Key.Length, trailingLength, argumentName);

    internal QuicLbConnectionIdGenerator CreateGenerator(int trailingLength)
        => new(ConfigRotation, ServerId.Span, NonceLength, Key.Span, EncodeLength, trailingLength);
}
