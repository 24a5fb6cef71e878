using System.Collections.Generic;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>Options for a <see cref="QuicListener"/>. Mirrors System.Net.Quic.QuicListenerOptions.</summary>
public sealed class QuicListenerOptions
{
    /// <summary>The endpoint to listen on. Mandatory.</summary>
    public IPEndPoint ListenEndPoint { get; set; } = null!;

    /// <summary>The application protocols (ALPN) accepted by this listener. Mandatory, at least one.</summary>
    public List<SslApplicationProtocol> ApplicationProtocols { get; set; } = null!;

    /// <summary>Number of connections that may wait to be accepted before new ones are refused. Default 512.</summary>
    public int ListenBacklog { get; set; }

    /// <summary>Selects the options of each incoming connection, given its ClientHello information. Mandatory.</summary>
    public Func<QuicConnection, SslClientHelloInfo, CancellationToken, ValueTask<QuicServerConnectionOptions>> ConnectionOptionsCallback { get; set; } = null!;

    /// <summary>
    /// Extension beyond System.Net.Quic: validate every client's address with a Retry before creating its connection
    /// (RFC 9000 §8.1.2). The server answers a client's first Initial with a Retry carrying an address token and only
    /// creates the connection when the client repeats its Initial with that token; this costs one round trip per
    /// connection and keeps no state for spoofed source addresses. A client that presents a valid token from an earlier
    /// connection's NEW_TOKEN frame is already validated (§8.1.3) and is not retried. Default false: the address is then
    /// validated by the handshake itself, under the 3x anti-amplification limit (§8.1).
    /// <para>
    /// Managed provider only: with the msquic provider <see cref="QuicListener.ListenAsync(QuicListenerOptions, CancellationToken)"/>
    /// throws <see cref="PlatformNotSupportedException"/> when this is true (System.Net.Quic offers no such setting;
    /// msquic decides on its own when to send Retry, from its handshake memory limit).
    /// </para>
    /// </summary>
    public bool RequireRetry { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the number of UDP sockets the listener opens on its port (SO_REUSEPORT), each with its
    /// own driver thread, so that a server uses several cores. The kernel spreads new clients over the sockets by address and
    /// steers every later packet to the socket that owns its connection by a tag in the connection ID (a classic BPF
    /// reuseport program); a packet that still lands on the wrong socket is handed to the right one. 0 (the default) is 1;
    /// <see cref="Environment.ProcessorCount"/> is the usual choice for a busy server. Where the kernel lacks SO_REUSEPORT
    /// (not Linux) the listener opens one socket whatever this says. Managed provider only; see docs/SCALING.md.
    /// </summary>
    public int ListenerSockets { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the number of sockets in the SO_REUSEPORT group of the listener's port when the
    /// group spans several processes (each a server of its own, all given the same port, group size and fleet keys), so
    /// that the kernel steers every packet of a connection to the process that holds it. The listener's own
    /// <see cref="ListenerSockets"/> sockets are the group's sockets <see cref="ReusePortGroupIndex"/> and up; its connection
    /// IDs carry their socket's group index, and every process attaches the same steering program (the last one attached
    /// governs the group; they are identical). Sockets take their group index in bind order: start the processes one after
    /// the other in the order of their indices. A packet for a connection of another process that reaches this one (that
    /// process is gone) is answered with a stateless reset. 0 (the default): the group is this listener's sockets alone.
    /// Requires a port other than 0; Linux only (elsewhere one ordinary socket, so a second process cannot bind the port).
    /// Managed provider only; see docs/SCALING.md.
    /// </summary>
    public int ReusePortGroupSize { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the group index of this listener's first socket in a SO_REUSEPORT group spanning
    /// processes (see <see cref="ReusePortGroupSize"/>): 0 for the process that binds the port first, then the number of
    /// sockets bound before this listener's. Default 0. Managed provider only.
    /// </summary>
    public int ReusePortGroupIndex { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: make the connection IDs of this listener routable by a QUIC-LB load balancer
    /// (draft-ietf-quic-load-balancers). Null (the default): random IDs. Managed provider only.
    /// </summary>
    public QuicLoadBalancingOptions? LoadBalancing { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the static key stateless reset tokens are derived from (RFC 9000 §10.3.2), at least
    /// 16 bytes. Servers of a fleet given the same key (and routable connection IDs) send valid stateless resets for each
    /// other's connections, so a client whose server lost its state learns it at once instead of waiting for its idle
    /// timeout. Empty (the default): a random key per listener. Keep it secret. Managed provider only.
    /// </summary>
    public ReadOnlyMemory<byte> StatelessResetKey { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the key Retry and NEW_TOKEN address validation tokens are sealed with (RFC 9000
    /// §8.1.3), at least 16 bytes. Servers of a fleet given the same key accept each other's tokens, so a client retried by
    /// one server may complete its handshake with another. Empty (the default): a random key per listener. Keep it secret.
    /// Managed provider only.
    /// </summary>
    public ReadOnlyMemory<byte> AddressValidationTokenKey { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the most stream buffer memory the listener's connections hold together, send and
    /// receive (pooled 4 KiB chunks of data written and not yet acknowledged, or received and not yet read). While it is
    /// reached, new clients are refused with CONNECTION_REFUSED and each connection buffers for sending no more than its
    /// minimum send budget (256 KiB); connections already open keep working. Each connection's own send buffering is
    /// bounded by what its path carries (about twice its congestion window, at least 256 KiB, at most 16 MiB) whatever
    /// this says. 0 (the default): 256 MiB. Managed provider only: with the msquic provider
    /// <see cref="QuicListener.ListenAsync(QuicListenerOptions, CancellationToken)"/> throws
    /// <see cref="PlatformNotSupportedException"/> when set (msquic bounds its buffering per connection and by its own
    /// handshake memory limit).
    /// </summary>
    public long MaxStreamBufferBytes { get; set; }

    /// <summary>The stream buffer memory limit in effect: <see cref="MaxStreamBufferBytes"/>, or 256 MiB when 0.</summary>
    internal long EffectiveMaxStreamBufferBytes => MaxStreamBufferBytes > 0 ? MaxStreamBufferBytes : Streams.EndpointBufferBudget.DefaultLimitBytes;

    /// <summary>True when an option only the managed provider implements is set.</summary>
    internal bool UsesManagedScaleOutOptions
        => ListenerSockets > 1 || LoadBalancing is not null || !StatelessResetKey.IsEmpty || !AddressValidationTokenKey.IsEmpty
            || ReusePortGroupSize != 0 || ReusePortGroupIndex != 0;

    /// <summary>The socket count actually used: 1 by default and where SO_REUSEPORT is missing.</summary>
    internal int EffectiveListenerSockets => ListenerSockets <= 1 || !OperatingSystem.IsLinux() ? 1 : ListenerSockets;

    /// <summary>The sockets of the whole SO_REUSEPORT group (all processes): at least <see cref="EffectiveListenerSockets"/>; 1 where SO_REUSEPORT is missing.</summary>
    internal int EffectiveReusePortGroupSize => ReusePortGroupSize <= 1 || !OperatingSystem.IsLinux() ? EffectiveListenerSockets : Math.Max(ReusePortGroupSize, EffectiveListenerSockets);

    /// <summary>The group index of the listener's first socket (0 when the group is the listener's alone).</summary>
    internal int EffectiveReusePortGroupIndex => EffectiveReusePortGroupSize > EffectiveListenerSockets ? ReusePortGroupIndex : 0;

    private void ValidateScaleOut(string argumentName)
    {
        if (ListenerSockets < 0 || ListenerSockets > 256)
        {
            throw new ArgumentOutOfRangeException(argumentName, ListenerSockets, $"'{nameof(ListenerSockets)}' must be between 0 and 256.");
        }
        if (ReusePortGroupSize < 0 || ReusePortGroupSize > 256)
        {
            throw new ArgumentOutOfRangeException(argumentName, ReusePortGroupSize, $"'{nameof(ReusePortGroupSize)}' must be between 0 and 256.");
        }
        int localSockets = Math.Max(1, ListenerSockets);
        if (ReusePortGroupIndex < 0 || (ReusePortGroupIndex > 0 && ReusePortGroupIndex + localSockets > ReusePortGroupSize))
        {
            throw new ArgumentOutOfRangeException(argumentName, ReusePortGroupIndex, $"'{nameof(ReusePortGroupIndex)}' plus the listener's sockets must not exceed '{nameof(ReusePortGroupSize)}'.");
        }
        if (ReusePortGroupSize > localSockets && ListenEndPoint is { Port: 0 })
        {
            throw new ArgumentException($"A '{nameof(ReusePortGroupSize)}' spanning processes needs a port other than 0 in '{nameof(ListenEndPoint)}'.", argumentName);
        }
        LoadBalancing?.Validate(argumentName, EffectiveReusePortGroupSize > 1 ? 1 : 0);
        if (!StatelessResetKey.IsEmpty && StatelessResetKey.Length < 16)
        {
            throw new ArgumentException($"'{nameof(StatelessResetKey)}' must be empty or at least 16 bytes long.", argumentName);
        }
        if (!AddressValidationTokenKey.IsEmpty && AddressValidationTokenKey.Length < 16)
        {
            throw new ArgumentException($"'{nameof(AddressValidationTokenKey)}' must be empty or at least 16 bytes long.", argumentName);
        }
    }

    /// <summary>
    /// Extension beyond System.Net.Quic: the QUIC versions the listener speaks, most preferred first (compatible version
    /// negotiation, RFC 9368). A client whose first Initial is in one of them and whose version_information lists a
    /// version that comes earlier here is answered in that version (e.g. <c>[Version2, Version1]</c> upgrades v1 clients
    /// that offer v2); others are answered in their own version, and clients in a version not listed get Version
    /// Negotiation. Null (the default): versions 1 and 2, each client answered in its own version. Validated: not empty,
    /// no duplicates. Managed provider only: with the msquic provider ListenAsync throws
    /// <see cref="PlatformNotSupportedException"/> when set.
    /// </summary>
    public IList<QuicProtocolVersion>? ProtocolVersions { get; set; }

    internal void Validate(string argumentName)
    {
        ValidateScaleOut(argumentName);
        QuicProtocolVersions.Validate(ProtocolVersions, argumentName, nameof(ProtocolVersions));
        if (ListenEndPoint is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ListenEndPoint)}' must be specified and not null to start a listener.");
        }
        if (ApplicationProtocols is null || ApplicationProtocols.Count == 0)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ApplicationProtocols)}' must be specified and contain at least one item to start a listener.");
        }
        if (ConnectionOptionsCallback is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ConnectionOptionsCallback)}' must be specified and not null to start a listener.");
        }
        if (ListenBacklog < 0)
        {
            throw new ArgumentOutOfRangeException(argumentName, ListenBacklog, $"'{nameof(ListenBacklog)}' must not be negative.");
        }
        if (MaxStreamBufferBytes < 0)
        {
            throw new ArgumentOutOfRangeException(argumentName, MaxStreamBufferBytes, $"'{nameof(MaxStreamBufferBytes)}' must not be negative.");
        }
        if (ListenBacklog == 0)
        {
            ListenBacklog = QuicDefaults.DefaultListenBacklog;
        }
        ValidatePreferredAddress(argumentName);
    }

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9000 §9.6): a second address the listener also receives on and advertises to
    /// its clients in the preferred_address transport parameter, with a connection ID and stateless reset token of its own;
    /// clients that take it move their connection there after the handshake. Null (the default): none. Validated: a specific
    /// (not wildcard) IPv4 or IPv6 address, a port other than 0, not the listen endpoint, the listen endpoint's address family
    /// (any family when that is the dual-stack IPv6 wildcard), and a single listener socket. Managed provider only: with the
    /// msquic provider ListenAsync throws <see cref="PlatformNotSupportedException"/> when set.
    /// </summary>
    public IPEndPoint? PreferredAddress { get; set; }

    private void ValidatePreferredAddress(string argumentName)
    {
        if (PreferredAddress is not { } preferred) return;
        if (preferred.AddressFamily is not (System.Net.Sockets.AddressFamily.InterNetwork or System.Net.Sockets.AddressFamily.InterNetworkV6))
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' must be an IPv4 or IPv6 address.", argumentName);
        }
        if (preferred.Port == 0)
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' needs a port other than 0.", argumentName);
        }
        if (preferred.Address.Equals(IPAddress.Any) || preferred.Address.Equals(IPAddress.IPv6Any))
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' must be a specific address that clients can send to, not a wildcard.", argumentName);
        }
        if (preferred.Equals(ListenEndPoint))
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' must differ from '{nameof(ListenEndPoint)}'.", argumentName);
        }
        bool dualStack = ListenEndPoint.Address.Equals(IPAddress.IPv6Any);
        if (!dualStack && preferred.AddressFamily != ListenEndPoint.AddressFamily)
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' must be of the address family of '{nameof(ListenEndPoint)}'.", argumentName);
        }
        if (EffectiveListenerSockets > 1 || ReusePortGroupSize > 1)
        {
            throw new ArgumentException($"'{nameof(PreferredAddress)}' is not supported with several listener sockets.", argumentName);
        }
    }
}
