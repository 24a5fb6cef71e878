using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// Client migration (RFC 9000 §9): to the server's preferred address after the handshake (§9.6), and to a new local socket
/// when the app calls <see cref="MigrateAsync"/> (§9.2). Each new path is a socket of its own (a local path of the host,
/// see ManagedDriverHost.Paths.cs) connected to the path's server address; the core moves the traffic and validates the
/// path, and this layer closes the socket the connection left (the first socket stays open, unused, until the connection
/// ends: its driver carries the connection's work queue) or, when validation failed, the new one.
/// </summary>
internal sealed partial class ManagedConnection
{
    // Driver thread only.
    private byte _nextLocalPath = 1;
    private byte _migratingPath;
    private byte _migratingFromPath;
    private TaskCompletionSource? _migrationWaiter;
    private NetworkAddress _pathRemote;
    private byte _pathLocal;

    /// <summary>Driver thread, after the events: starts the preferred-address migration, ends a migration whose validation ended.</summary>
    private void CheckPaths(Connection core)
    {
        if (core.IsServer)
        {
            // The client moved (migration, NAT rebinding) or came to the preferred address: the endpoints follow.
            if (core.RemoteAddress == _pathRemote && core.LocalPath == _pathLocal) return;
            _pathRemote = core.RemoteAddress;
            _pathLocal = core.LocalPath;
            _remoteEndPoint = _pathRemote.ToEndPoint();
            _localEndPoint = _host.LocalEndPointOf(_pathLocal);
            return;
        }
        if (core.PreferredAddressMigrationPending && _migratingPath == 0) StartPreferredAddressMigration(core);
        if (_migratingPath != 0 && core.MigrationState != PathValidationState.Pending) FinishMigration(core);
    }

    private void StartPreferredAddressMigration(Connection core)
    {
        NetworkAddress target = core.PreferredAddress;
        Socket? socket = _host.Paths is null ? null : TryOpenPathSocket(null, target.ToEndPoint(), out _);
        if (socket is null)
        {
            core.DeclinePreferredAddress();
            return;
        }
        if (TryMoveToNewPath(core, socket, toPreferredAddress: true, MonotonicClock.NowUs)) _host.Driver.Wake();
    }

    /// <summary>
    /// Driver thread: <paramref name="socket"/> becomes the next local path and the core moves there (to the server's
    /// preferred address, or to the same server address from the new socket) and validates it; false, with the path
    /// closed again, when the core cannot move now.
    /// </summary>
    private bool TryMoveToNewPath(Connection core, Socket socket, bool toPreferredAddress, long nowUs)
    {
        byte from = core.LocalPath;
        byte path = _nextLocalPath++;
        _host.AddPath(path, socket);
        bool moved = toPreferredAddress ? core.MigrateToPreferredAddress(path, nowUs) : core.MigrateLocalPath(path, nowUs);
        if (!moved)
        {
            _host.RemovePath(path);
            return false;
        }
        _migratingPath = path;
        _migratingFromPath = from;
        return true;
    }

    /// <summary>A bound socket connected to <paramref name="remote"/> (null when the OS refuses, with the reason).</summary>
    private static Socket? TryOpenPathSocket(IPEndPoint? local, IPEndPoint remote, out Exception? failure)
    {
        failure = null;
        Socket? socket = null;
        try
        {
            socket = UdpSocketFactory.Bind(local ?? UdpSocketFactory.DefaultLocalFor(remote));
            socket.Connect(remote);
            return socket;
        }
        catch (SocketException e)
        {
            socket?.Dispose();
            failure = e;
            return null;
        }
    }

    private void FinishMigration(Connection core)
    {
        byte path = _migratingPath;
        _migratingPath = 0;
        TaskCompletionSource? waiter = _migrationWaiter;
        _migrationWaiter = null;
        if (core.MigrationState == PathValidationState.Validated && core.LocalPath == path)
        {
            _localEndPoint = _host.LocalEndPointOf(path);
            _remoteEndPoint = core.RemoteAddress.ToEndPoint();
            if (_migratingFromPath != 0) _host.RemovePath(_migratingFromPath);
            waiter?.TrySetResult();
            return;
        }
        _host.RemovePath(path);
        waiter?.TrySetException(new QuicException(QuicError.ConnectionTimeout, null, null,
            "The new path did not answer path validation (RFC 9000 §8.2); the connection stays on its previous path.", null));
    }

    /// <summary>Driver thread (End): a migration still waiting ends with the connection.</summary>
    private void FailMigration(Exception exception)
    {
        TaskCompletionSource? waiter = _migrationWaiter;
        _migrationWaiter = null;
        waiter?.TrySetException(exception);
    }

    public override async ValueTask MigrateAsync(IPEndPoint? localEndPoint, CancellationToken cancellationToken)
    {
        if (_listener is not null) throw new InvalidOperationException("Only a client migrates (RFC 9000 §9); this is a server connection.");
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicConnection));
        IPEndPoint remote = _remoteEndPoint;
        if (localEndPoint is not null && localEndPoint.AddressFamily != remote.AddressFamily && !localEndPoint.Address.Equals(IPAddress.IPv6Any))
        {
            throw new ArgumentException("The local endpoint must be of the remote endpoint's address family.", nameof(localEndPoint));
        }
        cancellationToken.ThrowIfCancellationRequested();
        if (_host.Paths is null)
        {
            throw new NotSupportedException($"Migration needs the connection's driver on a shared client loop ({UdpDriverLoop.ClientLoopsEnvironmentVariable} is 0).");
        }
        Socket socket = TryOpenPathSocket(localEndPoint, remote, out Exception? failure) ?? throw failure!;
        var request = new MigrationRequest(this, socket, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        _host.Post(new DriverCall(static (state, nowUs) => ((MigrationRequest)state).Start(nowUs), request, static state => ((MigrationRequest)state).Abandon()));
        await request.Completion.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>An app's <see cref="MigrateAsync"/>: runs on the driver thread.</summary>
    private sealed class MigrationRequest(ManagedConnection connection, Socket socket, TaskCompletionSource completion)
    {
        public TaskCompletionSource Completion => completion;

        public void Start(long nowUs) => connection.StartMigration(this, socket, nowUs);

        public void Abandon()
        {
            socket.Dispose();
            completion.TrySetException(new ObjectDisposedException(nameof(QuicConnection)));
        }
    }

    private void StartMigration(MigrationRequest request, Socket socket, long nowUs)
    {
        Connection? core = _core;
        Exception? refusal = null;
        if (IsEnded || core is null) refusal = _endException ?? new ObjectDisposedException(nameof(QuicConnection));
        else if (!core.IsHandshakeConfirmed) refusal = new QuicException(QuicError.InternalError, null, null, "The connection cannot migrate before its handshake is confirmed (RFC 9000 §9).", null);
        else if (!core.PeerAllowsActiveMigration) refusal = new QuicException(QuicError.InternalError, null, null, "The server sent disable_active_migration (RFC 9000 §18.2): the connection cannot migrate.", null);
        else if (_migratingPath != 0) refusal = new QuicException(QuicError.InternalError, null, null, "A migration is already validating its path.", null);
        else if (_nextLocalPath == 0) refusal = new QuicException(QuicError.InternalError, null, null, "The connection used all its local paths.", null);
        if (refusal is not null)
        {
            socket.Dispose();
            request.Completion.TrySetException(refusal);
            return;
        }
        if (!TryMoveToNewPath(core!, socket, toPreferredAddress: false, nowUs))
        {
            request.Completion.TrySetException(new QuicException(QuicError.InternalError, null, null,
                "The server gave no connection ID the connection has not used yet (RFC 9000 §9.5): it cannot migrate now.", null));
            return;
        }
        _migrationWaiter = request.Completion;
    }
}
