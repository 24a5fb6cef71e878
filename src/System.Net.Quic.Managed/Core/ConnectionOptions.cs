using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>The settings of one connection, resolved from the public options (times in microseconds).</summary>
internal sealed class ConnectionOptions
{
    public uint Version { get; init; } = QuicVersion.V1;

    /// <summary>
    /// Client: the versions listed in version_information (RFC 9368), in preference order, <see cref="Version"/> among
    /// them; a server may answer in any of them (compatible version negotiation). Null: <see cref="Version"/> only.
    /// </summary>
    public uint[]? AvailableVersions { get; init; }

    /// <summary>Length of the connection IDs we issue (RFC 9000 §5.1); 0 to 20. The endpoint routes short headers by it.</summary>
    public int LocalConnectionIdLength { get; init; } = 8;

    public long IdleTimeoutUs { get; init; } = 30_000_000;

    public long HandshakeTimeoutUs { get; init; } = 10_000_000;

    /// <summary>Send a PING when nothing was sent for this long; 0 disables keep-alive.</summary>
    public long KeepAliveIntervalUs { get; init; }

    public StreamTableOptions Streams { get; init; } = new();

    /// <summary>Our active_connection_id_limit (RFC 9000 §18.2).</summary>
    public ulong ActiveConnectionIdLimit { get; init; } = 4;

    /// <summary>Our max_ack_delay (RFC 9000 §18.2): how long we may delay an ACK.</summary>
    public long MaxAckDelayUs { get; init; } = 25_000;

    /// <summary>Acknowledge bulk data less often than every second packet once 100 have arrived (the rule is on
    /// <see cref="Recovery.ReceivedPacketTracker.OnPacketReceived"/>); off: every second ack-eliciting packet.</summary>
    public bool AckDecimation { get; init; } = true;

    /// <summary>The UDP payload size we send once the peer allows it (no path MTU discovery yet): 1200 to 1452.</summary>
    public int MaxDatagramSize { get; init; } = 1350;

    public CongestionControlAlgorithm CongestionControl { get; init; } = CongestionControlAlgorithm.Cubic;

    public IRandomSource Random { get; init; } = SecureRandomSource.Instance;

    /// <summary>Client: a token the server gave in NEW_TOKEN on an earlier connection (RFC 9000 §8.1.3), sent in our Initials.</summary>
    public byte[]? InitialToken { get; init; }

    /// <summary>Label for diagnostics (events, logs).</summary>
    /// <summary>
    /// Client: the server's transport parameters remembered with the session ticket being resumed (encoded extension body).
    /// With 0-RTT keys they bound what may be sent before the handshake completes (RFC 9000 §7.4.1); null: no 0-RTT.
    /// </summary>
    public byte[]? EarlyDataTransportParameters { get; init; }

    /// <summary>
    /// Client with 0-RTT keys: how long the first flight may wait for the application's first request (data on a
    /// bidirectional stream of ours) so that the ClientHello and the request leave together. Without it, on a short path
    /// the server's reply can complete the handshake before the application's write reaches the connection, and the
    /// request goes as 1-RTT. 0: send the ClientHello at once.
    /// </summary>
    public long EarlyDataFirstFlightHoldUs { get; init; }

    public string Name { get; init; } = "connection";

    /// <summary>max_udp_payload_size we advertise (RFC 9000 §18.2): the largest datagram the I/O layer can receive.</summary>
    public ulong MaxUdpPayloadSize { get; init; } = TransportParameters.DefaultMaxUdpPayloadSize;

    /// <summary>max_datagram_frame_size we advertise (RFC 9221 §3); 0: not advertised, DATAGRAM frames are refused.</summary>
    public ulong MaxDatagramFrameSize { get; init; }

    /// <summary>Received datagrams kept until the application takes them; beyond it the oldest is dropped.</summary>
    public int DatagramReceiveQueueCapacity { get; init; } = 128;

    /// <summary>Advertise grease_quic_bit (RFC 9287): accept packets with the Fixed Bit cleared; then the peer may grease it.</summary>
    public bool GreaseQuicBit { get; init; } = true;

    /// <summary>ECN (RFC 9000 §13.4): mark ECT(0) while the path validates, report received codepoints, react to CE.</summary>
    public bool EnableEcn { get; init; } = true;

    /// <summary>
    /// The largest UDP payload path MTU discovery (RFC 8899) probes for; at most <see cref="MaxDatagramSize"/> (the default,
    /// 0): no discovery, every datagram stays at <see cref="MaxDatagramSize"/>.
    /// </summary>
    public int MaxPathDatagramSize { get; init; }

    // Migration (RFC 9000 §9): Connection.Migration.cs.

    /// <summary>Server: the IPv4 address advertised in the preferred_address transport parameter (RFC 9000 §9.6); null: none.</summary>
    public System.Net.IPEndPoint? PreferredAddressV4 { get; init; }

    /// <summary>Server: the IPv6 address advertised in the preferred_address transport parameter (RFC 9000 §9.6); null: none.</summary>
    public System.Net.IPEndPoint? PreferredAddressV6 { get; init; }

    /// <summary>Client: ignore a server's preferred address (RFC 9000 §9.6 lets a client stay where it is).</summary>
    public bool DisablePreferredAddressMigration { get; init; }

    /// <summary>Send the disable_active_migration transport parameter (RFC 9000 §18.2).</summary>
    public bool DisableActiveMigration { get; init; }
}
