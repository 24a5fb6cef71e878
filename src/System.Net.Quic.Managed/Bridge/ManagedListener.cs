using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Runtime.ExceptionServices;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A public <see cref="QuicListener"/> over a server <see cref="Endpoint"/>. It is the endpoint's connection factory:
/// when a client's first Initial arrives and authenticates (driver thread), it calls the app's ConnectionOptionsCallback.
/// <para>
/// The callback runs before the TLS engine exists; its <see cref="SslClientHelloInfo"/> carries the SNI read from the
/// first datagram by <see cref="ClientHelloPeek"/> (empty when the client sent none, or when its ClientHello spans more
/// than one datagram; ServerCertificateSelectionCallback always sees the real SNI). A callback that completes synchronously (the usual ValueTask.FromResult) is used at once; one
/// that completes later is remembered for the client's address and used when the client retransmits its Initial
/// (RFC 9002 §6.2: within one PTO), so asynchronous callbacks cost one retransmission but never block the I/O thread.
/// </para>
/// <para>
/// As System.Net.Quic on msquic: <see cref="QuicListenerOptions.ListenBacklog"/> bounds the connections that are
/// handshaking or wait in the accept queue (beyond it clients are refused with CONNECTION_REFUSED), and a handshake that
/// fails reaches <see cref="AcceptConnectionAsync"/> as its exception (the callback's failure as
/// <see cref="QuicError.CallbackError"/>, invalid options as <see cref="ArgumentException"/>, TLS failures as
/// <see cref="AuthenticationException"/>, a stalled handshake as <see cref="QuicError.ConnectionTimeout"/>). The endpoint
/// hands each new core connection back with the object created for it (quinn's <c>Incoming</c>), so nothing is paired by
/// position, and a datagram that does not authenticate creates nothing.
/// </para>
/// </summary>
internal sealed class ManagedListener : QuicListenerImpl
{
    private const int MaxDeferredCallbacks = 1024;

    private readonly ManagedDriverHost _host;
    private readonly ListenerPort _port;
    private readonly QuicListenerOptions _options;
    private readonly byte[][] _protocols;
    private readonly byte[] _sessionTicketKey = System.Security.Cryptography.RandomNumberGenerator.GetBytes(32);
    private readonly Streams.EndpointBufferBudget _bufferBudget;
    // Connections whose handshake completed, and exceptions of handshakes that failed, in the order they ended.
    private readonly Channel<object> _accepted = Channel.CreateUnbounded<object>(new UnboundedChannelOptions { SingleWriter = true });

    // Driver thread only.
    private readonly Dictionary<NetworkAddress, (QuicConnection Owner, Task<QuicServerConnectionOptions> Options, long SinceUs)> _deferred = new();

    // Handshaking + queued for accept (ListenBacklog bounds it); taken on the driver thread, given back by accept.
    private int _pending;
    private volatile bool _disposed;
    private int _disposeStarted;
    // Cancelled by DisposeAsync: the token ConnectionOptionsCallback gets (as System.Net.Quic's).
    private readonly CancellationTokenSource _disposeCts = new();
    // Set by DisposeAsync; completed on the driver thread once no client waits for a deferred callback any more.
    private volatile TaskCompletionSource? _deferredDrained;

    private ManagedListener(ManagedDriverHost host, ListenerPort port, QuicListenerOptions options)
    {
        _host = host;
        _port = port;
        _options = options;
        _bufferBudget = new Streams.EndpointBufferBudget(options.EffectiveMaxStreamBufferBytes);
        _protocols = new byte[options.ApplicationProtocols.Count][];
        for (int i = 0; i < _protocols.Length; i++) _protocols[i] = options.ApplicationProtocols[i].Protocol.ToArray();
    }

    public override IPEndPoint LocalEndPoint => _host.Driver.LocalEndPoint;

    public ManagedDriverHost Host => _host;

    /// <summary>The port (one socket, or several SO_REUSEPORT workers) this listener takes connections from.</summary>
    internal ListenerPort Port => _port;

    public List<SslApplicationProtocol> ApplicationProtocols => _options.ApplicationProtocols;

    /// <summary>True when <paramref name="protocol"/> (an ALPN identifier from a ClientHello) is one of this listener's.</summary>
    public bool Accepts(ReadOnlySpan<byte> protocol)
    {
        foreach (byte[] own in _protocols)
        {
            if (protocol.SequenceEqual(own)) return true;
        }
        return false;
    }

    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        ManagedListener listener = ListenerPort.Listen(options, (host, port) => new ManagedListener(host, port, options));
        return ValueTask.FromResult(new QuicListener(listener));
    }

    /// <summary>Driver thread, from <see cref="Endpoint.Receive(Span{byte}, in NetworkAddress, long)"/>: options and TLS engine for a new client, or refuse it.</summary>
    public IncomingDecision Decide(in IncomingConnectionRequest request) => Decide(request, _host);

    /// <summary>As <see cref="Decide(in IncomingConnectionRequest)"/>, for a connection on worker <paramref name="host"/> of a multi-socket port.</summary>
    public IncomingDecision Decide(in IncomingConnectionRequest request, ManagedDriverHost host)
    {
        if (_disposed) return DeclineAfterDisposal(request.Remote);
        ExpireDeferred();

        QuicConnection owner;
        QuicServerConnectionOptions serverOptions;
        if (_deferred.Remove(request.Remote, out var deferred))
        {
            if (!deferred.Options.IsCompleted)
            {
                _deferred[request.Remote] = deferred;
                return IncomingDecision.Drop;
            }
            owner = deferred.Owner;
            if (!deferred.Options.IsCompletedSuccessfully)
            {
                return Fail(CallbackFailure(deferred.Options.Exception?.InnerException ?? new OperationCanceledException()));
            }
            serverOptions = deferred.Options.Result;
        }
        else
        {
            // The listener's stream buffer memory is spent: the connections it has keep working, new ones wait.
            if (_bufferBudget.IsExceeded) return IncomingDecision.Refuse(TransportErrorCode.ConnectionRefused, "the listener's stream buffer memory limit is reached");
            if (Interlocked.Increment(ref _pending) > _options.ListenBacklog)
            {
                Interlocked.Decrement(ref _pending);
                return IncomingDecision.Refuse(TransportErrorCode.ConnectionRefused, "the listener's backlog is full");
            }
            owner = new QuicConnection();
            ValueTask<QuicServerConnectionOptions> pending;
            try
            {
                pending = _options.ConnectionOptionsCallback(owner, new SslClientHelloInfo(request.ServerName ?? string.Empty, SslProtocols.Tls13), _disposeCts.Token);
            }
            catch (Exception ex)
            {
                return Fail(CallbackFailure(ex));
            }
            if (!pending.IsCompleted)
            {
                if (_deferred.Count < MaxDeferredCallbacks)
                {
                    _deferred[request.Remote] = (owner, pending.AsTask(), MonotonicClock.NowUs);
                }
                else
                {
                    Interlocked.Decrement(ref _pending);
                }
                return IncomingDecision.Drop;
            }
            if (!pending.IsCompletedSuccessfully)
            {
                Task<QuicServerConnectionOptions> failed = pending.AsTask();
                return Fail(CallbackFailure(failed.Exception?.InnerException ?? new OperationCanceledException()));
            }
            serverOptions = pending.Result;
        }
        try
        {
            if (serverOptions is null) throw new ArgumentNullException(nameof(serverOptions), "The ConnectionOptionsCallback returned null.");
            serverOptions.Validate(nameof(serverOptions));
            ManagedOptionsMapping.RequireTls13(serverOptions.ServerAuthenticationOptions.EnabledSslProtocols, nameof(serverOptions));
        }
        catch (ArgumentException ex)
        {
            return Fail(ex);
        }
        IPEndPoint remote = request.Remote.ToEndPoint();
        var connection = new ManagedConnection(host, owner, serverOptions, this, remote, "");
        owner.Impl = connection;
        ConnectionOptions options = ManagedOptionsMapping.ToConnectionOptions(serverOptions, remote, "server " + remote, host.Driver.MaxReceivableDatagram, preferredAddress: _options.PreferredAddress);
        options.Streams.EndpointBudget = _bufferBudget;
        TlsHandshakeOptions tls = ManagedOptionsMapping.ToServerTls(serverOptions.ServerAuthenticationOptions, _options.ApplicationProtocols, owner);
        // Tickets for resumption are sealed with this listener's key (RFC 8446 §4.6.1); 0-RTT only when the app opted in.
        tls.SessionTicketKey = _sessionTicketKey;
        tls.EnableEarlyData = serverOptions.EnableEarlyData;
        host.AddReference();
        return IncomingDecision.Accept(options, new TlsCryptoHandshake(true, tls), connection);
    }

    /// <summary>System.Net.Quic wraps what the options callback threw (or faulted with) in a QuicException.</summary>
    private static Exception CallbackFailure(Exception ex) => QuicExceptionFactory.CallbackError(ex);

    /// <summary>
    /// The handshake cannot go on: the client is told at once with a TLS user_canceled alert (RFC 9001 §4.8), as msquic's
    /// server does (its client sees an AuthenticationException; a handshake_failure would be QUIC_STATUS_HANDSHAKE_FAILURE,
    /// an internal error, there), and the app's next accept throws <paramref name="failure"/>.
    /// </summary>
    private IncomingDecision Fail(Exception failure)
    {
        Enqueue(failure);
        return IncomingDecision.Refuse(TlsAlert.UserCanceled.ToTransportErrorCode(), "the server could not set up the connection");
    }

    /// <summary>
    /// Driver thread, once disposed: a client whose handshake waited for a deferred options callback is declined with
    /// user_canceled when it retransmits its Initial (as msquic's server ends a handshake its listener gave up: the
    /// client sees an AuthenticationException); anyone else is dropped.
    /// </summary>
    private IncomingDecision DeclineAfterDisposal(NetworkAddress remote)
    {
        if (!_deferred.Remove(remote)) return IncomingDecision.Drop;
        Interlocked.Decrement(ref _pending);
        if (_deferred.Count == 0) _deferredDrained?.TrySetResult();
        return IncomingDecision.Refuse(TlsAlert.UserCanceled.ToTransportErrorCode(), "the listener was disposed");
    }

    /// <summary>A deferred callback whose client never came back holds its backlog place for a handshake timeout at most.</summary>
    private void ExpireDeferred()
    {
        if (_deferred.Count == 0) return;
        long now = MonotonicClock.NowUs;
        long limit = (long)QuicDefaults.HandshakeTimeout.TotalMicroseconds;
        List<NetworkAddress>? expired = null;
        foreach (var (address, entry) in _deferred)
        {
            if (now - entry.SinceUs > limit) (expired ??= new()).Add(address);
        }
        if (expired is null) return;
        foreach (NetworkAddress address in expired)
        {
            _deferred.Remove(address);
            Interlocked.Decrement(ref _pending);
        }
    }

    /// <summary>Driver thread: the endpoint discarded <paramref name="connection"/> before handing it over.</summary>
    public void Abandon(ManagedConnection connection)
    {
        Interlocked.Decrement(ref _pending);
        connection.ReleaseHost();
    }

    public void OnHandshakeCompleted(ManagedConnection connection)
    {
        if (!Enqueue(connection.Owner))
        {
            _ = Task.Run(async () => await connection.DisposeAsync().ConfigureAwait(false));
        }
    }

    public void OnHandshakeFailed(ManagedConnection connection, Exception failure)
    {
        connection.ReleaseHost();
        Enqueue(failure);
    }

    /// <summary>Queues an accept result; false (and the backlog place given back) once the listener is disposed.</summary>
    private bool Enqueue(object item)
    {
        if (!_disposed && _accepted.Writer.TryWrite(item)) return true;
        Interlocked.Decrement(ref _pending);
        return false;
    }

    public override async ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(_disposed, typeof(QuicListener));
        object item;
        try
        {
            item = await _accepted.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(nameof(QuicListener));
        }
        Interlocked.Decrement(ref _pending);
        if (item is QuicConnection connection) return connection;
        ExceptionDispatchInfo.Throw((Exception)item);
        throw null!; // unreachable
    }

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposeStarted, 1) != 0) return;
        var drained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _deferredDrained = drained;
        _disposed = true;
        _disposeCts.Cancel();
        // Clients waiting for a deferred options callback retransmit their Initial within a PTO and are declined then
        // (DeclineAfterDisposal); the port keeps routing to this listener until they were, or for a bounded time.
        _host.Post(new DriverCall(static (state, _) =>
        {
            var listener = (ManagedListener)state;
            if (listener._deferred.Count == 0) listener._deferredDrained!.TrySetResult();
        }, this, static state => ((ManagedListener)state)._deferredDrained!.TrySetResult()));
        try
        {
            await drained.Task.WaitAsync(DeferredDrainTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // A client that never retransmitted: it times out on its own.
        }
        if (drained.Task.IsCompleted)
        {
            // Two more turns of the driver: the last refusal's CONNECTION_CLOSE leaves before the socket may close. Posted
            // work runs at the start of a step and the step's flush comes after it, so only a second item, run in the
            // next step, is known to follow the flush that sent the close.
            var turn = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _host.Post(new DriverCall(static (state, _) =>
            {
                var (host, done) = ((ManagedDriverHost, TaskCompletionSource))state;
                host.Post(new DriverCall(static (s, _) => ((TaskCompletionSource)s).TrySetResult(), done, static s => ((TaskCompletionSource)s).TrySetResult()));
            }, (_host, turn), static state => (((ManagedDriverHost, TaskCompletionSource))state).Item2.TrySetResult()));
            await turn.Task.WaitAsync(DeferredDrainTimeout).ConfigureAwait(false);
        }
        _port.Remove(this);
        _accepted.Writer.TryComplete();
        while (_accepted.Reader.TryRead(out object? unaccepted))
        {
            if (unaccepted is QuicConnection connection) await connection.DisposeAsync().ConfigureAwait(false);
        }
        _host.Release();
        _disposeCts.Dispose();
    }

    /// <summary>How long disposal waits for clients of deferred callbacks to retransmit (a first PTO is about 1 s).</summary>
    private static readonly TimeSpan DeferredDrainTimeout = TimeSpan.FromSeconds(3);
}
