using System.Collections.Generic;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// One QUIC connection as a sans-IO state machine (RFC 9000, 9001, 9002): datagrams and time go in,
/// datagrams, a timer deadline and events come out. Single-threaded: the caller serialises every call.
/// The file is split by concern: handshake (keys, transport parameters), receive (packets, frames),
/// send (packet assembly), timers, and the stream operations the API layer calls.
/// </summary>
internal sealed partial class Connection : IDisposable, IDeadlineItem
{
    /// <summary>The smallest datagram that may carry an Initial packet (RFC 9000 §14.1).</summary>
    public const int MinInitialDatagramSize = 1200;

    /// <summary>The smallest datagram worth sending on an amplification-limited path after the handshake: a short header
    /// with a 20-byte connection ID, a PATH_CHALLENGE or PATH_RESPONSE, and the AEAD tag.</summary>
    private const int MinShortDatagramSize = 64;

    private readonly ConnectionOptions _options;
    private readonly ICryptoHandshake _tls;
    private readonly IRandomSource _random;
    private readonly PacketSpaceState[] _spaces = new PacketSpaceState[3];
    private readonly RecoveryController<SentPacketMeta> _recovery;
    private readonly StreamTable _streams;
    private readonly SentFramesPool _framePool = new();
    private readonly LocalConnectionIdSet _localIds;
    private readonly PeerConnectionIdSet _peerIds;
    private readonly Queue<ConnectionEvent> _events = new();
    private readonly PendingStreamEvents _readablePending = new();
    private readonly PendingStreamEvents _writablePending = new();
    private readonly TransportParameters _localParameters;
    private readonly PathState _path = new();
    private readonly DatagramState _datagrams = new();
    private readonly EarlyDataState _earlyData = new();
    private readonly VersionState _versions = new();
    private readonly TraceState _trace = new();

    private IdleTimeout _idle;
    private CloseState _close;
    private HandshakeState _handshake;
    private ConnectionId _originalDestinationId;
    private readonly ConnectionId _initialSourceId;
    private ConnectionId _peerInitialSourceId;
    private ConnectionId? _retrySourceId;
    private byte[] _retryToken = Array.Empty<byte>();
    private byte[]? _newTokenToSend;
    private bool _closeFramePending;
    private long _handshakeDeadlineUs;
    private readonly long _startTimeUs;
    private int _peerAckDelayExponent = (int)TransportParameters.DefaultAckDelayExponent;
    private long _currentReceivePhaseFirstPacket;
    private bool _disposed;

    private Connection(ConnectionOptions options, ICryptoHandshake tls, bool isServer, in NetworkAddress remote, long nowUs,
        StatelessResetTokenGenerator? resetTokens, ConnectionIdGenerator? idGenerator = null)
    {
        _options = options;
        _tls = tls;
        _random = options.Random;
        IsServer = isServer;
        Version = options.Version;
        _path.Remote = remote;
        _startTimeUs = nowUs;
        for (int i = 0; i < _spaces.Length; i++) _spaces[i] = new PacketSpaceState((PacketNumberSpace)i, options.MaxAckDelayUs, options.AckDecimation);

        _path.MaxDatagramSize = Math.Clamp(options.MaxDatagramSize, MinInitialDatagramSize, 1452);
        ICongestionController cc = CreateCongestionController(options, _path.MaxDatagramSize);
        _recovery = new RecoveryController<SentPacketMeta>(isServer, cc);
        _path.Pacer = new Pacer(_path.MaxDatagramSize, rateSource: cc as IRateSamplingCongestionController);
        _path.Ecn = new EcnValidator(options.EnableEcn);
        _path.Pmtu = new PathMtuDiscovery(_path.MaxDatagramSize, options.MaxPathDatagramSize);
        _streams = new StreamTable(isServer, options.Streams);
        _idle = new IdleTimeout(options.IdleTimeoutUs, nowUs);
        _handshakeDeadlineUs = options.HandshakeTimeoutUs == long.MaxValue ? long.MaxValue : nowUs + options.HandshakeTimeoutUs;
        _peerIds = new PeerConnectionIdSet(options.ActiveConnectionIdLimit);
        _initialSourceId = idGenerator?.Create(_random) ?? ConnectionId.Create(_random, options.LocalConnectionIdLength);
        _localIds = new LocalConnectionIdSet(_initialSourceId, _random, resetTokens ?? new StatelessResetTokenGenerator(_random), idGenerator);
        _localParameters = CreateLocalParameters();
        SetUpPreferredAddress();
        QuicTelemetryCounters.ConnectionStarted();
    }

    /// <summary>
    /// Creates a client connection and starts its handshake (the first flight is ready to send). <paramref name="resetTokens"/>
    /// is the endpoint's generator: the tokens we advertise must be the ones the endpoint can recompute after losing our
    /// state (RFC 9000 §10.3.2); null gives the connection a private key (no endpoint to reset on its behalf).
    /// </summary>
    public static Connection CreateClient(ConnectionOptions options, ICryptoHandshake tls, in NetworkAddress remote, long nowUs,
        StatelessResetTokenGenerator? resetTokens = null)
    {
        var connection = new Connection(options, tls, isServer: false, remote, nowUs, resetTokens);
        connection._versions.Original = connection.Version;
        connection.SetVersionInformation(options.AvailableVersions);
        connection.StartClient(nowUs);
        return connection;
    }

    /// <summary>
    /// Creates a server connection for a client's first Initial (RFC 9000 §7.2). <paramref name="originalDestinationId"/> is the
    /// DCID of the client's first Initial (before any Retry); <paramref name="clientInitialDestinationId"/> is the DCID of the
    /// Initial being answered (it keys the Initial secrets); <paramref name="retrySourceId"/> is set when the client came back
    /// with a Retry token, and then the client's address counts as validated. <paramref name="idGenerator"/>, the endpoint's,
    /// chooses every ID we issue (routable ones: QUIC-LB, worker tags); null: random IDs of the options' length.
    /// </summary>
    /// <para><paramref name="clientVersion"/> is the version of the client's Initial (0: <see cref="ConnectionOptions.Version"/>),
    /// <paramref name="version"/> the one to answer in (compatible version negotiation, RFC 9368; 0: the client's), and
    /// <paramref name="serverVersions"/> the server's versions, sent in version_information.</para>
    public static Connection CreateServer(ConnectionOptions options, ICryptoHandshake tls, in NetworkAddress remote,
        in ConnectionId originalDestinationId, in ConnectionId clientInitialDestinationId, in ConnectionId clientSourceId,
        ConnectionId? retrySourceId, long nowUs, StatelessResetTokenGenerator? resetTokens = null, ConnectionIdGenerator? idGenerator = null,
        uint clientVersion = 0, uint version = 0, uint[]? serverVersions = null)
    {
        var connection = new Connection(options, tls, isServer: true, remote, nowUs, resetTokens, idGenerator);
        if (clientVersion == 0) clientVersion = options.Version;
        connection.Version = version == 0 ? clientVersion : version;
        connection.AcceptOriginalVersion(clientVersion, clientInitialDestinationId);
        connection.SetVersionInformation(serverVersions ?? new[] { QuicVersion.V1, QuicVersion.V2 });
        connection.StartServer(originalDestinationId, clientInitialDestinationId, clientSourceId, retrySourceId, nowUs);
        return connection;
    }

    public bool IsServer { get; }

    public uint Version { get; private set; }

    public NetworkAddress RemoteAddress => _path.Remote;

    /// <summary>The ID we put in long headers (sequence 0 of our IDs).</summary>
    public ConnectionId InitialSourceId => _initialSourceId;

    /// <summary>The IDs the endpoint must route to this connection; drained by the endpoint.</summary>
    public LocalConnectionIdSet LocalIds => _localIds;

    public bool IsHandshakeComplete => _handshake.IsCompleted;

    public bool IsHandshakeConfirmed => _handshake.IsConfirmed;

    /// <summary>
    /// True when the handshake went through a Retry (RFC 9000 §8.1.2): on a client, one was accepted; on a server, the
    /// client came back with our Retry token (so its address was validated before the connection existed).
    /// </summary>
    public bool Retried => _retrySourceId is not null;

    public ConnectionPhase Phase => _close.Phase;

    /// <summary>Set once the connection is closing, draining or closed.</summary>
    public ConnectionError? Error { get; private set; }

    public ICryptoHandshake Handshake => _tls;

    public TransportParameters? PeerParameters { get; private set; }

    /// <summary>Statistics of this connection (the public API exposes them as an extension).</summary>
    public ConnectionStatistics Statistics { get; } = new();

    public RttEstimator Rtt => _recovery.Rtt;

    public ICongestionController CongestionController => _recovery.CongestionController;

    internal StreamTable Streams => _streams;

    internal RecoveryController<SentPacketMeta> Recovery => _recovery;

    /// <summary>
    /// Protocol tracing (qlog). Null by default: every call site checks it first, so tracing costs nothing when off.
    /// </summary>
    public IConnectionTracer? Tracer
    {
        get => _trace.Tracer;
        set
        {
            _trace.Tracer = value;
            _trace.FrameTypes = value is null ? null : new List<ulong>();
        }
    }


    // State of the concerns that live in the other Connection.*.cs files, declared here so that the whole state of a
    // connection reads in one place.
    // EarlyData
    // Frames
    private bool _tlsFed;                  // CRYPTO data went to the TLS engine since it was last drained (Receive)
    // Paths
    private bool _pathFrameInPacket;       // the packet being built carries PATH_CHALLENGE or PATH_RESPONSE (padded, §8.2)
    private int _receivingDatagramLength;  // the datagram being processed (counted for a new path's amplification limit)
    private ConnectionId _currentPacketDestination;
    // StreamOperations
    private long _currentSendPhaseFirstPacket;
    // Testing
    private byte[]? _rawFramesForTesting;
    // Timers
    private bool _keepAlivePending;
    private long _maxStreamsHoldUntilUs = long.MaxValue; // MAX_STREAMS held back to ride with a later packet (Send)
    // Tokens
    private byte[]? _pendingNewTokenInFlight;
    // Tracing
    // Datagrams
    // Grease
    // Versions
    // Ecn
    // Mtu

    /// <summary>The Destination Connection ID of the client's first Initial (names qlog files).</summary>
    public ConnectionId OriginalDestinationId => _originalDestinationId;

    /// <summary>The next event for the API layer.</summary>
    public bool TryDequeueEvent(out ConnectionEvent e)
    {
        if (!_events.TryDequeue(out e)) return false;
        if (e.Kind == ConnectionEventKind.StreamReadable) _readablePending.Remove(e.StreamId);
        else if (e.Kind == ConnectionEventKind.StreamWritable) _writablePending.Remove(e.StreamId);
        return true;
    }

    private PacketSpaceState Space(PacketNumberSpace space) => _spaces[(int)space];

    /// <summary>
    /// Queues an event. Readable and writable notifications are coalesced per stream: one still waiting in the queue
    /// already tells the application to look at the stream, so every STREAM frame or ACK adding another would only
    /// grow the queue with the transfer (one per packet) when the application is slow to drain it.
    /// </summary>
    private void Emit(ConnectionEventKind kind, long streamId = -1)
    {
        if (kind == ConnectionEventKind.StreamReadable && !_readablePending.Add(streamId)) return;
        if (kind == ConnectionEventKind.StreamWritable && !_writablePending.Add(streamId)) return;
        _events.Enqueue(new ConnectionEvent(kind, streamId, Error));
        RequestService();
    }

    /// <summary>Events queued for the application but not yet taken.</summary>
    internal int PendingEventCount => _events.Count;

    /// <summary>The endpoint's bookkeeping of this connection (ready queue, timer heap, routing of reset tokens).</summary>
    internal ConnectionSlot Slot { get; } = new();

    /// <summary>Changes when the peer's connection IDs, and so their stateless reset tokens, may have changed.</summary>
    internal int PeerIdsVersion => _peerIds.Version;

    /// <summary>The stateless reset tokens of the peer's connection IDs we hold (RFC 9000 §10.3.1).</summary>
    internal StatelessResetToken[] PeerResetTokens() => _peerIds.ResetTokens();

    long IDeadlineItem.ScheduledUs
    {
        get => Slot.ScheduledUs;
        set => Slot.ScheduledUs = value;
    }

    bool IDeadlineItem.IsScheduledHere => Slot.Index >= 0;

    /// <summary>The API layer's object for this connection (the endpoint only carries it).</summary>
    public object? Owner { get; set; }

    /// <summary>
    /// Something changed outside the endpoint's receive, timeout and send calls (an application operation, an event):
    /// the endpoint offers this connection a send in the current step and hands its events to the API layer.
    /// </summary>
    private void RequestService() => Slot.Scheduler?.MarkReady(this);

    private TransportParameters CreateLocalParameters()
    {
        StreamTableOptions s = _options.Streams;
        var p = new TransportParameters
        {
            MaxIdleTimeoutMs = (ulong)(_options.IdleTimeoutUs / 1000),
            MaxUdpPayloadSize = _options.MaxUdpPayloadSize,
            InitialMaxData = (ulong)s.InitialMaxData,
            InitialMaxStreamDataBidiLocal = (ulong)s.InitialMaxStreamDataBidiLocal,
            InitialMaxStreamDataBidiRemote = (ulong)s.InitialMaxStreamDataBidiRemote,
            InitialMaxStreamDataUni = (ulong)s.InitialMaxStreamDataUni,
            InitialMaxStreamsBidi = (ulong)s.MaxStreamsBidi,
            InitialMaxStreamsUni = (ulong)s.MaxStreamsUni,
            AckDelayExponent = TransportParameters.DefaultAckDelayExponent,
            MaxAckDelayMs = (ulong)(_options.MaxAckDelayUs / 1000),
            ActiveConnectionIdLimit = _options.ActiveConnectionIdLimit,
            InitialSourceConnectionId = _initialSourceId.Span.ToArray(),
            MaxDatagramFrameSize = _options.MaxDatagramFrameSize > 0 ? _options.MaxDatagramFrameSize : null,
            GreaseQuicBit = _options.GreaseQuicBit,
        };
        return p;
    }

    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        _streams.BufferBudget.Detach();
        foreach (PacketSpaceState space in _spaces) space.Dispose();
        _versions.OriginalInitialReceiveKeys?.Dispose();
        _tls.Dispose();
        _trace.Tracer?.Dispose();
        QuicTelemetryCounters.RemovePathSample(_trace.LastReportedRttUs, _trace.LastReportedCwnd);
        QuicTelemetryCounters.ConnectionEnded();
    }
}
