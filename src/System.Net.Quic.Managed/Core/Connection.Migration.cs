using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Paths beyond the first (RFC 9000 §9): the server's preferred address (§9.6) and the client's active migration to a new
/// local address (§9.2, §9.5). The core stays sans-IO: every path is a local path number (which socket of the I/O layer
/// sends and received a datagram; 0 is the one the connection started on) and the peer's address. A client migration moves
/// all traffic to the new path at once, with an unused peer connection ID (§9.5), and validates it with PATH_CHALLENGE;
/// when validation fails the client goes back to the previous path (with yet another unused ID when it has one).
/// </summary>
internal sealed partial class Connection
{

    /// <summary>The local path (socket of the I/O layer) datagrams of this connection go out on; 0 is the first one.</summary>
    public byte LocalPath => _path.LocalPath;

    /// <summary>Server: the client's first Initial arrived on local path <paramref name="localPath"/>: answer from there.</summary>
    public void StartOnLocalPath(byte localPath) => _path.LocalPath = localPath;

    /// <summary>Client: how the last migration ended (Idle before any).</summary>
    public PathValidationState MigrationState { get; private set; }

    /// <summary>Client: migrations started so far (each ends in <see cref="MigrationState"/> Validated or Failed).</summary>
    public int MigrationsStarted { get; private set; }

    /// <summary>Client migrations that failed validation and went back to the previous path.</summary>
    public int MigrationsFailed { get; private set; }

    /// <summary>Client: the server's preferred address of our address family, or default when it gave none (or we ignore it).</summary>
    public NetworkAddress PreferredAddress => _path.PreferredAddress;

    /// <summary>
    /// Client: the handshake is confirmed and the server offered a preferred address we have not acted on yet: the I/O layer
    /// opens a socket for it (or reuses its own) and calls <see cref="MigrateToPreferredAddress"/>, or <see cref="DeclinePreferredAddress"/>.
    /// </summary>
    public bool PreferredAddressMigrationPending
        => !IsServer && !_path.PreferredAddressHandled && !_path.PreferredAddress.IsDefault && _handshake.IsConfirmed && _close.Phase == ConnectionPhase.Open;

    /// <summary>True when the peer allows active migration now (§18.2: disable_active_migration does not cover the preferred address).</summary>
    public bool PeerAllowsActiveMigration => PeerParameters?.DisableActiveMigration != true || _path.MigratedToPreferredAddress;

    /// <summary>Client: stops considering the server's preferred address.</summary>
    public void DeclinePreferredAddress()
    {
        RequestService();
        _path.PreferredAddressHandled = true;
    }

    /// <summary>
    /// Client: moves to the server's preferred address (RFC 9000 §9.6.1) from local path <paramref name="localPath"/>, with
    /// the connection ID of the transport parameter, and validates the path. False when there is nothing to move to.
    /// </summary>
    public bool MigrateToPreferredAddress(byte localPath, long nowUs)
    {
        RequestService();
        if (!PreferredAddressMigrationPending) return false;
        _path.PreferredAddressHandled = true;
        if (!StartClientMigration(localPath, _path.PreferredAddress, nowUs)) return false;
        _path.MigratedToPreferredAddress = true;
        return true;
    }

    /// <summary>
    /// Client: the I/O layer opened local path <paramref name="localPath"/> (a new socket): move there with an unused peer
    /// connection ID (§9.5) and validate it. False when migration is not allowed (server, handshake not confirmed, the peer
    /// sent disable_active_migration, a migration still validating) or the peer gave no spare connection ID.
    /// </summary>
    public bool MigrateLocalPath(byte localPath, long nowUs)
    {
        RequestService();
        if (!PeerAllowsActiveMigration) return false;
        return StartClientMigration(localPath, _path.Remote, nowUs);
    }

    private bool StartClientMigration(byte localPath, in NetworkAddress remote, long nowUs)
    {
        if (IsServer || !_handshake.IsConfirmed || _close.Phase != ConnectionPhase.Open) return false;
        if (_path.ClientMigrationPending) return false;
        if (!_peerIds.TryRotate()) return false;
        bool newHost = !remote.SameHost(_path.Remote);
        _path.PreviousRemote = _path.Remote;
        _path.PreviousLocalPath = _path.LocalPath;
        _path.Remote = remote;
        _path.LocalPath = localPath;
        _path.ClientMigrationPending = true;
        MigrationState = PathValidationState.Pending;
        MigrationsStarted++;
        StartPathValidation(nowUs, newPathModel: newHost || localPath != _path.PreviousLocalPath);
        return true;
    }

    /// <summary>Validation of the client's new path ended (from the path validator's response or timeout).</summary>
    private void OnClientMigrationValidated()
    {
        if (!_path.ClientMigrationPending) return;
        _path.ClientMigrationPending = false;
        MigrationState = PathValidationState.Validated;
    }

    private void OnClientMigrationFailed()
    {
        if (!_path.ClientMigrationPending) return;
        _path.ClientMigrationPending = false;
        MigrationState = PathValidationState.Failed;
        MigrationsFailed++;
        // §9.3.2 / §9.6.3: back to the last validated path; its old ID was retired, so a fresh one when we have it (§9.5).
        _path.Remote = _path.PreviousRemote;
        _path.LocalPath = _path.PreviousLocalPath;
        _peerIds.TryRotate();
        _recovery.Rtt.Reset();
        RestartPathSignals();
    }

    /// <summary>
    /// A datagram with its IP header's ECN bits <paramref name="ecn"/> that arrived on local path <paramref name="localPath"/>:
    /// both are facts of the datagram being processed, read deep in <see cref="Receive(Span{byte}, in NetworkAddress, long)"/>.
    /// </summary>
    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, byte localPath, long nowUs)
    {
        _path.ReceiveEcn = (EcnCodepoint)(ecn & 0b11);
        _path.ReceiveLocalPath = localPath;
        try
        {
            Receive(datagram, remote, nowUs);
        }
        finally
        {
            _path.ReceiveEcn = EcnCodepoint.NotEct;
            _path.ReceiveLocalPath = 0;
        }
    }

    /// <summary>True when a 1-RTT packet arrived on another path than the current one (another peer address or local socket).</summary>
    private bool ArrivedOnOtherPath(in NetworkAddress remote) => !remote.Equals(_path.Remote) || _path.ReceiveLocalPath != _path.LocalPath;

    /// <summary>Server: the transport parameter and its ID (sequence 1) when the options name a preferred address.</summary>
    private void SetUpPreferredAddress()
    {
        if (_options.DisableActiveMigration) _localParameters.DisableActiveMigration = true;
        if (!IsServer || (_options.PreferredAddressV4 is null && _options.PreferredAddressV6 is null) || _initialSourceId.Length == 0) return;
        IssuedConnectionId issued = _localIds.IssuePreferredAddressId();
        byte[] token = new byte[StatelessResetToken.Length];
        issued.ResetToken.CopyTo(token);
        _localParameters.PreferredAddress = new PreferredAddress
        {
            IPv4Address = _options.PreferredAddressV4?.Address ?? System.Net.IPAddress.Any,
            IPv4Port = (ushort)(_options.PreferredAddressV4?.Port ?? 0),
            IPv6Address = _options.PreferredAddressV6?.Address ?? System.Net.IPAddress.IPv6Any,
            IPv6Port = (ushort)(_options.PreferredAddressV6?.Port ?? 0),
            ConnectionId = issued.Id.Span.ToArray(),
            StatelessResetToken = token,
        };
    }

    /// <summary>Client: the server's preferred_address parameter: its ID is sequence 1 (§5.1.1), its address our target.</summary>
    private TransportErrorCode ApplyPreferredAddress(TransportParameters peer, out string? reason)
    {
        reason = null;
        if (IsServer || peer.PreferredAddress is not { } preferred) return TransportErrorCode.NoError;
        TransportErrorCode error = _peerIds.OnNewConnectionId(1, 0, new ConnectionId(preferred.ConnectionId),
            new StatelessResetToken(preferred.StatelessResetToken), out reason);
        if (error != TransportErrorCode.NoError)
        {
            reason = "preferred_address: " + reason;
            return TransportErrorCode.TransportParameterError;
        }
        if (_options.DisablePreferredAddressMigration) return TransportErrorCode.NoError;
        System.Net.IPEndPoint? target = _path.Remote.IsIPv6 ? preferred.IPv6EndPoint : preferred.IPv4EndPoint;
        if (target is null || target.Port == 0) return TransportErrorCode.NoError;
        var address = NetworkAddress.FromEndPoint(target);
        if (address.IsIPv6 != _path.Remote.IsIPv6 || address == _path.Remote) return TransportErrorCode.NoError;
        _path.PreferredAddress = address;
        return TransportErrorCode.NoError;
    }
}
