using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>
/// A public <see cref="QuicListener"/> over a server <see cref="Endpoint"/>. It is the endpoint's connection factory:
/// when a client's first Initial arrives (driver thread), it calls the app's ConnectionOptionsCallback.
/// <para>
/// The callback runs before the TLS engine exists; its <see cref="SslClientHelloInfo"/> carries the SNI read from the
/// first datagram by <see cref="ClientHelloPeek"/> (empty when the client sent none, or when its ClientHello spans more
/// than one datagram; ServerCertificateSelectionCallback always sees the real SNI). A callback that completes synchronously (the usual ValueTask.FromResult) is used at once; one
/// that completes later is remembered for the client's address and used when the client retransmits its Initial
/// (RFC 9002 §6.2: within one PTO), so asynchronous callbacks cost one retransmission but never block the I/O thread.
/// </para>
/// Connections are queued for <see cref="AcceptConnectionAsync"/> when their handshake completes.
/// </summary>
internal sealed class ManagedListener : QuicListenerImpl, IServerConnectionFactory
{
    private const int MaxDeferredCallbacks = 1024;

    private readonly ManagedDriverHost _host;
    private readonly QuicListenerOptions _options;
    private readonly byte[] _sessionTicketKey = System.Security.Cryptography.RandomNumberGenerator.GetBytes(32);
    private readonly Channel<QuicConnection> _accepted = Channel.CreateUnbounded<QuicConnection>(new UnboundedChannelOptions { SingleWriter = true });

    // Driver thread only.
    private readonly Queue<ManagedConnection> _created = new();
    private readonly Dictionary<NetworkAddress, (QuicConnection Owner, Task<QuicServerConnectionOptions> Options)> _deferred = new();
    private int _handshaking;

    private volatile bool _disposed;
    private int _disposeStarted;

    private ManagedListener(ManagedDriverHost host, QuicListenerOptions options)
    {
        _host = host;
        _options = options;
    }

    public override IPEndPoint LocalEndPoint => _host.Driver.LocalEndPoint;

    public ManagedDriverHost Host => _host;

    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Socket socket = UdpSocketFactory.Bind(options.ListenEndPoint);
        ManagedListener? listener = null;
        var endpoint = new Endpoint(new EndpointOptions { IsServer = true, LocalName = socket.LocalEndPoint?.ToString() ?? "", RequireRetry = options.RequireRetry }, new DeferredFactory(() => listener!));
        var host = new ManagedDriverHost(socket, endpoint, $"QuicManaged listener {socket.LocalEndPoint}");
        listener = new ManagedListener(host, options);
        host.Listener = listener;
        host.Start();
        return ValueTask.FromResult(new QuicListener(listener));
    }

    /// <summary>The endpoint needs its factory at construction, the listener needs the endpoint's host: break the cycle.</summary>
    private sealed class DeferredFactory : IServerConnectionFactory
    {
        private readonly Func<ManagedListener> _listener;

        public DeferredFactory(Func<ManagedListener> listener) => _listener = listener;

        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
            => _listener().TryCreate(request, out options, out handshake);
    }

    /// <summary>Driver thread, from <see cref="Endpoint.Receive"/>: options and TLS engine for a new client, or refuse it.</summary>
    public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
    {
        options = null!;
        handshake = null!;
        if (_disposed || _handshaking + _accepted.Reader.Count >= _options.ListenBacklog) return false;

        QuicConnection owner;
        QuicServerConnectionOptions serverOptions;
        if (_deferred.Remove(request.Remote, out var deferred))
        {
            if (!deferred.Options.IsCompleted)
            {
                _deferred[request.Remote] = deferred;
                return false;
            }
            if (!deferred.Options.IsCompletedSuccessfully) return false;
            owner = deferred.Owner;
            serverOptions = deferred.Options.Result;
        }
        else
        {
            owner = new QuicConnection();
            ValueTask<QuicServerConnectionOptions> pending;
            try
            {
                pending = _options.ConnectionOptionsCallback(owner, new SslClientHelloInfo(request.ServerName ?? string.Empty, SslProtocols.Tls13), CancellationToken.None);
            }
            catch
            {
                return false; // the app refused (System.Net.Quic closes the connection; the client times out here)
            }
            if (!pending.IsCompleted)
            {
                if (_deferred.Count < MaxDeferredCallbacks) _deferred[request.Remote] = (owner, pending.AsTask());
                return false;
            }
            if (!pending.IsCompletedSuccessfully)
            {
                _ = pending.AsTask().Exception;
                return false;
            }
            serverOptions = pending.Result;
        }
        try
        {
            ArgumentNullException.ThrowIfNull(serverOptions);
            serverOptions.Validate(nameof(serverOptions));
            ManagedOptionsMapping.RequireTls13(serverOptions.ServerAuthenticationOptions.EnabledSslProtocols, nameof(serverOptions));
        }
        catch (ArgumentException)
        {
            return false;
        }
        IPEndPoint remote = request.Remote.ToEndPoint();
        var connection = new ManagedConnection(_host, owner, serverOptions, this, remote, "");
        owner.Impl = connection;
        options = ManagedOptionsMapping.ToConnectionOptions(serverOptions, "server " + remote);
        TlsHandshakeOptions tls = ManagedOptionsMapping.ToServerTls(serverOptions.ServerAuthenticationOptions, _options.ApplicationProtocols, owner);
        // Tickets for resumption are sealed with this listener's key (RFC 8446 §4.6.1); 0-RTT only when the app opted in.
        tls.SessionTicketKey = _sessionTicketKey;
        tls.EnableEarlyData = serverOptions.EnableEarlyData;
        handshake = new TlsCryptoHandshake(true, tls);
        _created.Enqueue(connection);
        _handshaking++;
        _host.AddReference();
        return true;
    }

    /// <summary>Driver thread: pairs the endpoint's new connections with the objects created for them.</summary>
    public void OnStep()
    {
        while (_host.Endpoint.TryAccept(out Connection core))
        {
            if (!_created.TryDequeue(out ManagedConnection? connection)) continue;
            connection.AttachServer(core);
            _host.Add(connection);
        }
    }

    public void OnHandshakeCompleted(ManagedConnection connection)
    {
        _handshaking--;
        if (_disposed || !_accepted.Writer.TryWrite(connection.Owner))
        {
            _ = Task.Run(async () => await connection.DisposeAsync().ConfigureAwait(false));
        }
    }

    public void OnHandshakeFailed(ManagedConnection connection)
    {
        _handshaking--;
        connection.ReleaseHost();
    }

    public override async ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(_disposed, typeof(QuicListener));
        try
        {
            return await _accepted.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(nameof(QuicListener));
        }
    }

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposeStarted, 1) != 0) return;
        _disposed = true;
        _accepted.Writer.TryComplete();
        while (_accepted.Reader.TryRead(out QuicConnection? unaccepted)) await unaccepted.DisposeAsync().ConfigureAwait(false);
        _host.Release();
    }
}
