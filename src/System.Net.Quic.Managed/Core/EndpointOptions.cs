using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>Settings of an endpoint (one UDP socket's worth of connections).</summary>
internal sealed class EndpointOptions
{
    public bool IsServer { get; init; }

    /// <summary>Length of the connection IDs this endpoint issues; short headers are routed by it.</summary>
    public int ConnectionIdLength { get; init; } = 8;

    /// <summary>Server: answer every Initial without a valid token with a Retry (address validation, RFC 9000 §8.1.2).</summary>
    public bool RequireRetry { get; set; }

    /// <summary>Server: most connections at once (new Initials beyond it are dropped).</summary>
    public int MaxConnections { get; init; } = 65_536;

    /// <summary>
    /// Server: with this many handshakes in progress, new clients must come back with a Retry token first (RFC 9000
    /// §8.1.2), so a flood of Initials from spoofed addresses cannot fill the connection table; 0 never.
    /// </summary>
    public int RetryAboveHandshakes { get; init; } = 256;

    /// <summary>Most datagrams handed to the I/O layer in one GSO batch (the most a decimated ACK lets a sender send at
    /// once, see <see cref="Recovery.ReceivedPacketTracker.MaxDecimatedThreshold"/>).</summary>
    public int MaxSegmentsPerBatch { get; init; } = 32;

    /// <summary>The versions this endpoint speaks, preferred first (Version Negotiation lists them).</summary>
    public uint[] SupportedVersions { get; init; } = { QuicVersion.V1, QuicVersion.V2 };

    /// <summary>
    /// Server: versions in preference order for compatible version negotiation (RFC 9368): a client's first Initial is
    /// answered in the first of these that is its own version or one its version_information lists. Null: always the
    /// client's version (no upgrade).
    /// </summary>
    public uint[]? PreferredVersions { get; init; }

    public IRandomSource Random { get; init; } = SecureRandomSource.Instance;

    /// <summary>The local address as text, for diagnostics events (the core does not know its socket).</summary>
    public string LocalName { get; set; } = "";

    /// <summary>
    /// The static key stateless reset tokens are derived from (RFC 9000 §10.3.2), at least 16 bytes; null draws a random one.
    /// Set it to keep resets working across a restart of the endpoint (a new endpoint can then reset the old one's connections).
    /// </summary>
    public byte[]? StatelessResetKey { get; init; }

    /// <summary>
    /// The key Retry and NEW_TOKEN tokens are sealed with (RFC 9000 §8.1.3), at least 16 bytes; null draws a random one.
    /// Servers of a fleet given the same key accept each other's tokens.
    /// </summary>
    public byte[]? AddressValidationTokenKey { get; init; }

    /// <summary>
    /// Chooses the connection IDs of this endpoint's connections and Retry packets (QUIC-LB, worker tags); its length must be
    /// <see cref="ConnectionIdLength"/>. Null: random IDs.
    /// </summary>
    public ConnectionIdGenerator? ConnectionIdGenerator { get; init; }

    /// <summary>
    /// With a <see cref="WorkerTaggedConnectionIdGenerator"/>: where datagrams tagged for another worker go (see
    /// <see cref="IDatagramHandoff"/>). Null: they are treated as unknown (stateless reset).
    /// </summary>
    public IDatagramHandoff? Handoff { get; init; }

    /// <summary>
    /// Called with every connection the endpoint creates, before it handles the connection's first datagram (a server's)
    /// or sends its first (a client's), with the time: the API layer attaches its qlog tracer here, so a trace starts with
    /// the ClientHello, refused handshakes included.
    /// </summary>
    public Action<Connection, long>? ConnectionCreated { get; init; }
}
