using System.Collections.Generic;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The sans-IO endpoint behind one UDP socket (RFC 9000 §5.2): routes datagrams to connections by Destination
/// Connection ID, creates server connections for new Initials, and answers what belongs to no connection with
/// Version Negotiation (§6), Retry (§8.1.2) or a stateless reset (§10.3). Connections that finished closing are removed.
/// A step touches only the connections that have something to do (see <see cref="ConnectionScheduler"/>): those that
/// received a datagram, had an application operation or a due timer; nothing here iterates over all connections except
/// <see cref="Dispose"/> and the occasional rebuild of the timer heap.
/// </summary>
internal sealed class Endpoint : IDatagramEndpoint, IDisposable
{
    /// <summary>Bound on stateless packets (VN, Retry, reset) waiting to be sent: more are dropped, so a flood cannot grow memory.</summary>
    private const int MaxPendingStatelessPackets = 64;

    private readonly EndpointOptions _options;
    private readonly IServerConnectionFactory? _factory;
    private readonly Dictionary<ConnectionId, Connection> _routes = new();
    private readonly List<Connection> _connections = new();
    private readonly Queue<(Connection Connection, object? Owner)> _accepted = new();
    private readonly Queue<(byte[] Datagram, NetworkAddress To)> _stateless = new();
    private readonly StatelessResetTokenGenerator _resetTokens;
    private readonly StatelessResetLimiter _resetLimiter = new();
    private RecentRetries? _recentRetries;
    private readonly AddressValidationTokenCodec _tokens;
    private readonly Dictionary<Connection, ConnectionId> _clientChosenIds = new();
    private readonly Dictionary<StatelessResetToken, Connection> _resetRoutes = new();
    private readonly ConnectionScheduler _scheduler = new();
    private int _handshakesInProgress;

    public Endpoint(EndpointOptions options, IServerConnectionFactory? factory = null)
    {
        if (options.IsServer && factory is null) throw new ArgumentNullException(nameof(factory), "A server endpoint needs a connection factory.");
        _options = options;
        _factory = factory;
        if (options.ConnectionIdGenerator is { } generator && generator.Length != options.ConnectionIdLength)
        {
            throw new ArgumentException("The connection ID generator's length differs from ConnectionIdLength.", nameof(options));
        }
        _resetTokens = options.StatelessResetKey is { } key ? new StatelessResetTokenGenerator(key) : new StatelessResetTokenGenerator(options.Random);
        _tokens = options.AddressValidationTokenKey is { } tokenKey
            ? new AddressValidationTokenCodec(options.Random, tokenKey)
            : new AddressValidationTokenCodec(options.Random);
        _workerIds = options.Handoff is null ? null : options.ConnectionIdGenerator as WorkerTaggedConnectionIdGenerator;
    }

    private readonly WorkerTaggedConnectionIdGenerator? _workerIds;

    /// <summary>Datagrams handed to another worker of the same port (see <see cref="IDatagramHandoff"/>).</summary>
    public int DatagramsHandedOff { get; private set; }

    public IReadOnlyList<Connection> Connections => _connections;

    /// <summary>Stateless packets sent (for tests and statistics).</summary>
    public int VersionNegotiationsSent { get; private set; }

    public int RetriesSent { get; private set; }

    public int StatelessResetsSent { get; private set; }

    /// <summary>Stateless resets not sent because of <see cref="StatelessResetLimiter"/>'s rate limit.</summary>
    public int StatelessResetsLimited { get; private set; }

    public int DatagramsDropped { get; private set; }

    /// <summary>Server connections created since the last call (the listener takes them; the handshake may still be running).</summary>
    public bool TryAccept(out Connection connection) => TryAccept(out connection, out _);

    /// <summary>As <see cref="TryAccept(out Connection)"/>, with the owner object the factory chose for the connection.</summary>
    public bool TryAccept(out Connection connection, out object? owner)
    {
        if (_accepted.TryDequeue(out (Connection Connection, object? Owner) next))
        {
            connection = next.Connection;
            owner = next.Owner;
            return true;
        }
        connection = null!;
        owner = null;
        return false;
    }

    /// <summary>Initials dropped because nothing in them opened with the Initial keys (noise, forgeries).</summary>
    public int UnauthenticatedInitialsDropped { get; private set; }

    /// <summary>Clients refused with a CONNECTION_CLOSE (backlog full, options callback failed).</summary>
    public int ConnectionsRefused { get; private set; }

    /// <summary>Server connections whose handshake has not completed (bounded by <see cref="EndpointOptions.RetryAboveHandshakes"/>).</summary>
    public int HandshakesInProgress => _handshakesInProgress;

    /// <summary>The endpoint's ready queue and timer heap (for tests and the driver host).</summary>
    internal ConnectionScheduler Scheduler => _scheduler;

    /// <summary>
    /// True while a connection waits for a send attempt or for its events to be drained: the driver steps again before it
    /// sleeps. Not part of <see cref="NextTimeoutUs"/>, which stays the earliest timer.
    /// </summary>
    public bool HasPendingWork => _scheduler.HasPendingWork;

    /// <summary>
    /// Asks the endpoint to record which connections each step serviced, for <see cref="DrainServiced"/> (the API layer
    /// turns their events into completions).
    /// </summary>
    public void TrackServicedConnections() => _scheduler.TracksServiced = true;

    /// <summary>Offers <paramref name="connection"/> a send and an event drain in the current step.</summary>
    public void Wake(Connection connection) => _scheduler.MarkReady(connection);

    /// <summary>The connections serviced since the last call (received, timed out, sent, had work or ended), into <paramref name="into"/>.</summary>
    public void DrainServiced(List<Connection> into) => _scheduler.DrainServiced(into);

    /// <summary>Starts a client connection on this endpoint.</summary>
    public Connection Connect(ConnectionOptions options, ICryptoHandshake handshake, in NetworkAddress remote, long nowUs)
    {
        Connection connection = Connection.CreateClient(options, handshake, remote, nowUs, _resetTokens);
        _options.ConnectionCreated?.Invoke(connection, nowUs);
        connection.TraceStarted(_options.LocalName);
        Add(connection);
        UpdateRoutes(connection);
        return connection;
    }

    private long _lastNowUs;
    private byte _receiveEcn;
    private byte _receiveLocalPath;

    /// <summary>A datagram whose IP header carried the ECN bits <paramref name="ecn"/> (RFC 3168; 0: Not-ECT or unknown).</summary>
    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, long nowUs) => Receive(datagram, remote, ecn, localPath: 0, nowUs);

    /// <summary>A datagram that arrived on local path <paramref name="localPath"/> (a second socket: preferred address, migration).</summary>
    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, byte localPath, long nowUs)
    {
        _receiveEcn = ecn;
        _receiveLocalPath = localPath;
        try
        {
            Receive(datagram, remote, nowUs);
        }
        finally
        {
            _receiveEcn = 0;
            _receiveLocalPath = 0;
        }
    }

    public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs)
    {
        _lastNowUs = nowUs;
        if (datagram.IsEmpty) return;
        Connection? connection = Route(datagram);
        if (QuicEventSource.Log.DatagramsEnabled)
        {
            QuicEventSource.Log.OnDatagram(false, connection?.InitialSourceId.ToString() ?? "-", datagram, nowUs, _options.LocalName, remote.ToString());
        }
        if (connection is not null)
        {
            connection.Slot.Calls++;
            connection.Receive(datagram, remote, _receiveEcn, _receiveLocalPath, nowUs);
            // New IDs route at once: the next datagram of this batch may already use one.
            UpdateRoutes(connection);
            // Some datagrams end a connection at once (Version Negotiation, §6.2): a closed connection has no timer
            // left to run, so it is removed here.
            if (connection.Phase == ConnectionPhase.Closed) Remove(connection);
            else _scheduler.MarkReady(connection);
            return;
        }
        if (TryRouteStatelessReset(datagram, remote, nowUs)) return;
        if (_workerIds is not null && TryHandOff(datagram, remote)) return;
        if (_options.IsServer) HandleUnroutedAtServer(datagram, remote, nowUs);
        else DatagramsDropped++;
    }

    /// <summary>
    /// RFC 9000 §10.3.1: a stateless reset carries no connection ID of ours, so it cannot be routed; it is offered to the
    /// connections talking to the address it came from (a cheap filter before the token comparison). Checked before a
    /// server answers an unroutable short header with a reset of its own, so two endpoints never reset each other in a loop.
    /// </summary>
    private bool TryRouteStatelessReset(ReadOnlySpan<byte> datagram, in NetworkAddress remote, long nowUs)
    {
        if (PacketFirstByte.IsLongHeader(datagram[0]) || datagram.Length < StatelessReset.MinimumLength) return false;
        // The tail is looked up among the peers' tokens (kept in step with their ID sets, see SyncResetTokens); the
        // connection then compares it in fixed time itself.
        var tail = new StatelessResetToken(datagram.Slice(datagram.Length - StatelessResetToken.Length));
        if (!_resetRoutes.TryGetValue(tail, out Connection? connection) || !connection.RemoteAddress.SameHost(remote)
            || !connection.TryAcceptStatelessReset(datagram, nowUs))
        {
            return false;
        }
        _scheduler.MarkReady(connection);
        return true;
    }

    /// <summary>
    /// A short header, or a Handshake packet, addressed to an ID whose worker tag names another worker of this port goes to
    /// that worker (its connection may well exist there). Initials stay: the client's own ID carries no tag, and the kernel
    /// keeps a client's address on one worker.
    /// </summary>
    private bool TryHandOff(ReadOnlySpan<byte> datagram, in NetworkAddress remote)
    {
        int length = _options.ConnectionIdLength;
        ReadOnlySpan<byte> dcid;
        if (!PacketFirstByte.IsLongHeader(datagram[0]))
        {
            if (datagram.Length < 1 + length) return false;
            dcid = datagram.Slice(1, length);
        }
        else
        {
            if (!LongHeader.TryParse(datagram, out LongHeader header) || header.Type != PacketType.Handshake
                || header.DestinationConnectionId.Length != length) return false;
            dcid = header.DestinationConnectionId;
        }
        int worker = WorkerTaggedConnectionIdGenerator.WorkerOf(dcid, _workerIds!.WorkerCount);
        // The ECN codepoint goes along: the owner's ACK_ECN counts must include datagrams another worker read.
        if (worker == _workerIds.Worker || !_options.Handoff!.TryHandOff(worker, datagram, remote, _receiveEcn)) return false;
        DatagramsHandedOff++;
        return true;
    }

    private Connection? Route(ReadOnlySpan<byte> datagram)
    {
        ReadOnlySpan<byte> dcid;
        if (PacketFirstByte.IsLongHeader(datagram[0]))
        {
            // Version-independent: byte 5 is the DCID length (RFC 8999 §5.1).
            if (datagram.Length < 6 || datagram[5] > ConnectionId.MaxLength || datagram.Length < 6 + datagram[5]) return null;
            dcid = datagram.Slice(6, datagram[5]);
        }
        else
        {
            if (datagram.Length < 1 + _options.ConnectionIdLength) return null;
            dcid = datagram.Slice(1, _options.ConnectionIdLength);
        }
        return _routes.TryGetValue(new ConnectionId(dcid), out Connection? connection) ? connection : null;
    }

    private void HandleUnroutedAtServer(Span<byte> datagram, in NetworkAddress remote, long nowUs)
    {
        if (!PacketFirstByte.IsLongHeader(datagram[0]))
        {
            if (_resetLimiter.TryAcquire(remote, nowUs)) SendStatelessReset(datagram, remote);
            else StatelessResetsLimited++;
            return;
        }
        if (datagram.Length < 5) return;
        uint version = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(datagram.Slice(1));
        if (!IsSupported(version))
        {
            // RFC 9000 §6.1: only for datagrams big enough to be a client's first Initial (limits amplification).
            if (version != QuicVersion.Negotiation && datagram.Length >= Connection.MinInitialDatagramSize) SendVersionNegotiation(datagram, remote);
            else DatagramsDropped++;
            return;
        }
        if (!LongHeader.TryParse(datagram, out LongHeader header) || header.Type != PacketType.Initial
            || datagram.Length < Connection.MinInitialDatagramSize || header.DestinationConnectionId.Length < 8
            || _connections.Count >= _options.MaxConnections)
        {
            // §14.1: Initials in small datagrams are dropped; §7.2: a client's first DCID has at least 8 bytes.
            DatagramsDropped++;
            return;
        }

        var clientDestination = new ConnectionId(header.DestinationConnectionId);
        var clientSource = new ConnectionId(header.SourceConnectionId);
        ConnectionId originalDestination = clientDestination;
        ConnectionId? retrySource = null;
        bool addressValidatedByToken = false;
        if (!header.Token.IsEmpty)
        {
            AddressTokenValidation validation = _tokens.Validate(header.Token, remote.ToEndPoint(), nowUs, out AddressTokenKind kind, out ConnectionId odcid, out ConnectionId rscid);
            if (validation == AddressTokenValidation.Valid && kind == AddressTokenKind.Retry && rscid == clientDestination)
            {
                originalDestination = odcid;
                retrySource = rscid;
            }
            else if (validation != AddressTokenValidation.Valid && kind == AddressTokenKind.Retry)
            {
                DatagramsDropped++; // a bad Retry token: RFC 9000 §8.1.3 allows dropping it
                return;
            }
            else if (validation == AddressTokenValidation.Valid && kind == AddressTokenKind.NewToken)
            {
                // §8.1.3: a token from an earlier connection validates the address: no Retry round trip needed.
                addressValidatedByToken = true;
                NewTokensAccepted++;
            }
        }
        // RFC 9001 §5.2: Initial keys are public, but a datagram with no Initial that opens under them is noise or a
        // forgery with a plausible header: nothing is created and nobody is asked about it (the peek works on a copy).
        InitialPeek peek = ClientHelloPeek.Peek(datagram);
        if (!peek.Authenticated)
        {
            UnauthenticatedInitialsDropped++;
            DatagramsDropped++;
            return;
        }
        // §8.1: with many handshakes in progress (a flood of well-formed Initials from spoofed addresses), new clients
        // prove their address with a Retry before they cost any state, as msquic does past its handshake memory limit.
        bool retryForLoad = _options.RetryAboveHandshakes > 0 && _connections.Count >= _options.RetryAboveHandshakes
            && HandshakesInProgress >= _options.RetryAboveHandshakes;
        bool unvalidated = retrySource is null && !addressValidatedByToken;
        // A copy of an Initial already answered with a Retry (the client sent it again before it saw the Retry) gets a
        // Retry again, even if the load has dropped meanwhile: a connection made from it could never complete.
        bool retriedBefore = unvalidated && _recentRetries is not null && _recentRetries.Contains(clientDestination, nowUs);
        if ((_options.RequireRetry || retryForLoad || retriedBefore) && unvalidated)
        {
            SendRetry(header, clientDestination, clientSource, remote, nowUs);
            if (retryForLoad && !_options.RequireRetry) (_recentRetries ??= new RecentRetries()).Remember(clientDestination, nowUs);
            return;
        }

        IncomingDecision decision = _factory!.Decide(new IncomingConnectionRequest(remote, version, peek.ServerName, peek.ApplicationProtocols));
        if (decision.Action == IncomingAction.Drop)
        {
            DatagramsDropped++;
            return;
        }
        bool refused = decision.Action == IncomingAction.Refuse;
        ConnectionOptions options = decision.Options ?? new ConnectionOptions { Version = version };
        ICryptoHandshake handshake = decision.Handshake ?? new RefusingHandshake(decision.Refusal, decision.Reason ?? "refused");
        Connection connection = Connection.CreateServer(options, handshake, remote, originalDestination, clientDestination, clientSource, retrySource, nowUs, _resetTokens,
            _options.ConnectionIdGenerator, version, ChooseVersion(version, peek.TransportParameters), _options.SupportedVersions);
        if (addressValidatedByToken) connection.OnAddressValidatedByToken();
        connection.StartOnLocalPath(_receiveLocalPath);
        _options.ConnectionCreated?.Invoke(connection, nowUs);
        connection.Receive(datagram, remote, _receiveEcn, _receiveLocalPath, nowUs);
        if (connection.Statistics.PacketsReceived == 0)
        {
            // The peek opened a packet this connection could not (e.g. a version it does not take): keep nothing.
            DatagramsDropped++;
            connection.Dispose();
            if (!refused) _factory.Abandon(decision.Owner);
            return;
        }
        if (refused) ConnectionsRefused++;
        connection.TraceStarted(_options.LocalName);
        Add(connection);
        // Until the client switches to our ID it keeps addressing the one it chose (§7.2).
        _routes[clientDestination] = connection;
        _clientChosenIds[connection] = clientDestination;
        UpdateRoutes(connection);
        // A refused connection only waits out its closing period (RFC 9000 §10.2.1), answering with CONNECTION_CLOSE.
        if (!refused) _accepted.Enqueue((connection, decision.Owner));
    }

    /// <summary>
    /// RFC 9368 §2.3: the version to answer a client's first Initial in: the first of our preferred versions that is the
    /// client's own or, compatible with it, listed in its version_information. Without a preference list, or without the
    /// client's version_information, the client's version.
    /// </summary>
    private uint ChooseVersion(uint clientVersion, byte[]? clientTransportParameters)
    {
        if (_options.PreferredVersions is not { Length: > 0 } preferred || clientTransportParameters is null) return clientVersion;
        if (TransportParameters.TryDecode(clientTransportParameters, sentByServer: false, out TransportParameters? client, out _) != TransportErrorCode.NoError
            || client!.AvailableVersions is not { } available)
        {
            return clientVersion;
        }
        foreach (uint v in preferred)
        {
            if (v == clientVersion) return v;
            if (IsSupported(v) && Connection.AreCompatible(clientVersion, v) && Array.IndexOf(available, v) >= 0)
            {
                CompatibleVersionUpgrades++;
                return v;
            }
        }
        return clientVersion;
    }

    /// <summary>Client Initials answered in another version than theirs (compatible version negotiation).</summary>
    public int CompatibleVersionUpgrades { get; private set; }

    private bool IsSupported(uint version)
    {
        foreach (uint v in _options.SupportedVersions)
        {
            if (v == version) return true;
        }
        return false;
    }

    private void SendVersionNegotiation(ReadOnlySpan<byte> datagram, in NetworkAddress remote)
    {
        if (_stateless.Count >= MaxPendingStatelessPackets || datagram.Length < 7) return;
        int dcidLength = datagram[5];
        if (datagram.Length < 7 + dcidLength) return;
        int scidLength = datagram[6 + dcidLength];
        if (dcidLength > 255 || datagram.Length < 7 + dcidLength + scidLength) return;
        ReadOnlySpan<byte> dcid = datagram.Slice(6, dcidLength);
        ReadOnlySpan<byte> scid = datagram.Slice(7 + dcidLength, scidLength);
        byte[] packet = new byte[VersionNegotiationPacket.GetEncodedLength(scid.Length, dcid.Length, _options.SupportedVersions.Length)];
        var writer = new QuicWriter(packet);
        Span<byte> random = stackalloc byte[1];
        _options.Random.Fill(random);
        // The reply swaps the IDs: its DCID is the client's SCID (§17.2.1).
        if (!VersionNegotiationPacket.TryWrite(ref writer, scid, dcid, _options.SupportedVersions, random[0])) return;
        _stateless.Enqueue((packet, remote));
        VersionNegotiationsSent++;
    }

    private void SendRetry(LongHeader header, in ConnectionId clientDestination, in ConnectionId clientSource, in NetworkAddress remote, long nowUs)
    {
        if (_stateless.Count >= MaxPendingStatelessPackets) return;
        ConnectionId retrySource = _options.ConnectionIdGenerator?.Create(_options.Random) ?? ConnectionId.Create(_options.Random, _options.ConnectionIdLength);
        Span<byte> token = stackalloc byte[AddressValidationTokenCodec.MaxTokenLength];
        int tokenLength = _tokens.WriteRetryToken(token, remote.ToEndPoint(), clientDestination, retrySource, nowUs);
        byte[] packet = new byte[1 + 4 + 1 + clientSource.Length + 1 + retrySource.Length + tokenLength + RetryIntegrity.TagLength];
        var writer = new QuicWriter(packet);
        if (!RetryPacket.TryWriteWithoutTag(ref writer, header.Version, clientSource.Span, retrySource.Span, token.Slice(0, tokenLength))) return;
        int withoutTag = writer.Position;
        if (!RetryIntegrity.TryComputeTag(header.Version, clientDestination.Span, packet.AsSpan(0, withoutTag), packet.AsSpan(withoutTag, RetryIntegrity.TagLength))) return;
        _stateless.Enqueue((packet.AsSpan(0, withoutTag + RetryIntegrity.TagLength).ToArray(), remote));
        RetriesSent++;
    }

    private void SendStatelessReset(ReadOnlySpan<byte> datagram, in NetworkAddress remote)
    {
        // RFC 9000 §10.3: smaller than the packet that triggered it (no loops between two endpoints), at least 21 bytes.
        int length = Math.Min(datagram.Length - 1, 43);
        if (length < StatelessReset.MinimumLength || _stateless.Count >= MaxPendingStatelessPackets || datagram.Length < 1 + _options.ConnectionIdLength)
        {
            DatagramsDropped++;
            return;
        }
        var dcid = new ConnectionId(datagram.Slice(1, _options.ConnectionIdLength));
        Span<byte> token = stackalloc byte[StatelessResetToken.Length];
        _resetTokens.Generate(dcid).CopyTo(token);
        byte[] packet = new byte[length];
        _options.Random.Fill(packet.AsSpan(0, length - StatelessReset.TokenLength));
        if (!StatelessReset.TryWrite(packet, token)) return;
        _stateless.Enqueue((packet, remote));
        StatelessResetsSent++;
    }

    public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
    {
        if (_stateless.TryDequeue(out (byte[] Datagram, NetworkAddress To) pending))
        {
            pending.Datagram.CopyTo(buffer);
            datagram = new OutgoingDatagram(pending.Datagram.Length, pending.To, pending.Datagram.Length);
            return true;
        }
        // Only the ready connections are asked, in turn: one that sent a batch goes to the back of the queue, one with
        // nothing to send leaves it (its deadline goes into the heap).
        while (_scheduler.TryPeekReady(out Connection connection))
        {
            if (connection.Slot.Index < 0)
            {
                _scheduler.DequeueReady(); // removed while it waited
                continue;
            }
            byte ecn = connection.OutgoingEcn;
            connection.Slot.Calls++;
            if (!connection.TrySend(buffer, nowUs, out int first))
            {
                Settle(_scheduler.DequeueReady());
                continue;
            }
            // GSO: more full-size datagrams of the same connection go in the same batch (same size, last may be shorter).
            int total = first;
            for (int n = 1; n < _options.MaxSegmentsPerBatch && buffer.Length - total >= first; n++)
            {
                if (connection.OutgoingEcn != ecn) break; // one marking per batch: the I/O layer marks the whole send

                if (!connection.TrySend(buffer.Slice(total, first), nowUs, out int next)) break;
                total += next;
                if (next < first) break;
            }
            _scheduler.RotateReady();
            datagram = new OutgoingDatagram(total, connection.RemoteAddress, first, ecn, connection.LocalPath);
            if (QuicEventSource.Log.DatagramsEnabled) LogSent(connection, buffer.Slice(0, total), first, nowUs);
            UpdateRoutes(connection);
            return true;
        }
        datagram = default;
        return false;
    }

    private void LogSent(Connection connection, ReadOnlySpan<byte> batch, int segment, long nowUs)
    {
        string id = connection.InitialSourceId.ToString();
        string remote = connection.RemoteAddress.ToString();
        for (int offset = 0; offset < batch.Length; offset += segment)
        {
            QuicEventSource.Log.OnDatagram(true, id, batch.Slice(offset, Math.Min(segment, batch.Length - offset)), nowUs, _options.LocalName, remote);
        }
    }

    /// <summary>The earliest deadline of any connection (the top of the timer heap).</summary>
    public long NextTimeoutUs => _scheduler.NextDeadlineUs;

    /// <summary>Runs the connections whose deadline is due, taken from the timer heap; each then gets a send attempt.</summary>
    public void OnTimeout(long nowUs)
    {
        _lastNowUs = nowUs;
        while (_scheduler.TryTakeDue(nowUs, out Connection connection))
        {
            connection.Slot.Calls++;
            connection.OnTimeout(nowUs);
            UpdateRoutes(connection);
            if (connection.Phase == ConnectionPhase.Closed) Remove(connection);
            else _scheduler.MarkReady(connection);
        }
    }

    private void Add(Connection connection)
    {
        ConnectionSlot slot = connection.Slot;
        slot.Scheduler = _scheduler;
        slot.Index = _connections.Count;
        _connections.Add(connection);
        SyncHandshakeCount(connection);
        SyncResetTokens(connection);
        _scheduler.MarkReady(connection);
    }

    /// <summary>
    /// A connection leaves the ready queue: its routes, handshake count and reset tokens follow what it did in this step, a
    /// closed one goes, and the others' next deadline goes into the heap.
    /// </summary>
    private void Settle(Connection connection)
    {
        UpdateRoutes(connection);
        if (connection.Phase == ConnectionPhase.Closed)
        {
            Remove(connection);
            return;
        }
        SyncHandshakeCount(connection);
        SyncResetTokens(connection);
        _scheduler.Reschedule(connection, _connections);
        _scheduler.MarkServiced(connection);
    }

    private void SyncHandshakeCount(Connection connection)
    {
        bool handshaking = connection.IsServer && !connection.IsHandshakeComplete && connection.Phase == ConnectionPhase.Open && connection.Slot.Index >= 0;
        if (handshaking == connection.Slot.HandshakeCounted) return;
        connection.Slot.HandshakeCounted = handshaking;
        _handshakesInProgress += handshaking ? 1 : -1;
    }

    /// <summary>Keeps <see cref="_resetRoutes"/> in step with the reset tokens of the peer's connection IDs (they change rarely).</summary>
    private void SyncResetTokens(Connection connection)
    {
        ConnectionSlot slot = connection.Slot;
        int version = slot.Index >= 0 ? connection.PeerIdsVersion : -2;
        if (version == slot.ResetTokensVersion) return;
        foreach (StatelessResetToken old in slot.ResetTokens)
        {
            if (_resetRoutes.TryGetValue(old, out Connection? owner) && owner == connection) _resetRoutes.Remove(old);
        }
        slot.ResetTokens = slot.Index >= 0 ? connection.PeerResetTokens() : [];
        slot.ResetTokensVersion = version;
        foreach (StatelessResetToken token in slot.ResetTokens) _resetRoutes[token] = connection;
    }

    /// <summary>Clients that came back with a valid NEW_TOKEN token (no Retry needed).</summary>
    public int NewTokensAccepted { get; private set; }

    private void UpdateRoutes(Connection connection)
    {
        // RFC 9000 §8.1.3: once the handshake is confirmed the server gives the client a token for its next connection.
        if (_options.IsServer && connection.IsHandshakeConfirmed && !connection.NewTokenIssued && connection.Phase == ConnectionPhase.Open)
        {
            Span<byte> token = stackalloc byte[AddressValidationTokenCodec.MaxTokenLength];
            int length = _tokens.WriteNewToken(token, connection.RemoteAddress.ToEndPoint(), _lastNowUs);
            connection.QueueNewToken(token.Slice(0, length).ToArray());
        }
        while (connection.LocalIds.TryDequeueRoutingChange(out ConnectionIdRoutingChange change))
        {
            if (change.Added) _routes[change.Id] = connection;
            else if (_routes.TryGetValue(change.Id, out Connection? owner) && owner == connection) _routes.Remove(change.Id);
        }
        // Once the handshake is confirmed the client uses our IDs only; the one it chose need not route any more.
        if (connection.IsHandshakeConfirmed && _clientChosenIds.Remove(connection, out ConnectionId chosen)
            && _routes.TryGetValue(chosen, out Connection? routed) && routed == connection)
        {
            _routes.Remove(chosen);
        }
    }

    private void Remove(Connection connection)
    {
        ConnectionSlot slot = connection.Slot;
        if (slot.Index < 0) return;
        // O(1): the last connection takes the removed one's place.
        int last = _connections.Count - 1;
        Connection moved = _connections[last];
        _connections[slot.Index] = moved;
        moved.Slot.Index = slot.Index;
        _connections.RemoveAt(last);
        slot.Index = -1;
        _scheduler.Unschedule(connection);
        SyncHandshakeCount(connection);
        SyncResetTokens(connection);
        foreach (IssuedConnectionId issued in connection.LocalIds.Active)
        {
            if (_routes.TryGetValue(issued.Id, out Connection? owner) && owner == connection) _routes.Remove(issued.Id);
        }
        if (_clientChosenIds.Remove(connection, out ConnectionId chosen) && _routes.TryGetValue(chosen, out Connection? routed) && routed == connection)
        {
            _routes.Remove(chosen);
        }
        // The API layer sees the end (the core is closed) when it drains this step's connections.
        _scheduler.MarkServiced(connection);
        connection.Dispose();
    }

    /// <summary>Number of connection IDs routed (for tests: must return to zero when connections end).</summary>
    public int RouteCount => _routes.Count;

    public void Dispose()
    {
        foreach (Connection connection in _connections) connection.Dispose();
        _connections.Clear();
        _scheduler.Clear();
        _routes.Clear();
        _resetRoutes.Clear();
        _tokens.Dispose();
    }
}
