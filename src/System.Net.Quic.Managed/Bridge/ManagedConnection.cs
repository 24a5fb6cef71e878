using System.Collections.Generic;
using System.Diagnostics;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A public <see cref="QuicConnection"/> over the managed core. The core <see cref="Connection"/> is touched only on
/// the driver thread (work items and <see cref="ProcessEvents"/>); app threads post work and await
/// TaskCompletionSources created with RunContinuationsAsynchronously, so app code never runs on the driver thread
/// (except the listener's ConnectionOptionsCallback and StreamCapacityCallback, as documented on them).
/// </summary>
internal sealed partial class ManagedConnection : QuicConnectionImpl
{
    // The connection's phase, moved forward only, on the driver thread:
    //   Connecting -> EarlyData   0-RTT keys ready on a resuming client (ConnectAsync returns, streams open early)
    //   Connecting|EarlyData -> Connected   the handshake completed
    //   Connecting|EarlyData|Connected -> Ended   closed by either side, lost, timed out or disposed: every waiter
    //                                             failed, the core is not called any more
    //   Ended -> Detached   the core's closing or draining period is over (or there was none): the driver no longer
    //                       drains this connection and its reference on the socket and thread is given back
    // Disposal (_disposed) is the application's and independent of the phase; it ends the connection through the driver.
    private enum Phase : byte
    {
        Connecting,
        EarlyData,
        Connected,
        Ended,
        Detached,
    }

    private readonly ManagedDriverHost _host;
    private readonly ManagedListener? _listener;
    private readonly QuicConnectionOptions _options;
    private readonly TaskCompletionSource _handshake = new(TaskCreationOptions.RunContinuationsAsynchronously);
    // ConnectAsync's completion: the handshake, or earlier the moment 0-RTT data can be sent.
    private readonly TaskCompletionSource _connected = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Channel<QuicStream> _inbound = Channel.CreateUnbounded<QuicStream>(new UnboundedChannelOptions { SingleWriter = true });
    private readonly Dictionary<long, ManagedStream> _streams = new();

    /// <summary>The bytes this connection's streams hold staged on the callers' threads, all together.</summary>
    internal StagedBytesBudget StagedBytes { get; } = new();
    private readonly List<TaskCompletionSource> _closeWaiters = new();
    private readonly TaskCompletionSource _lifetime = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // Written on the driver thread only (forward only, see Phase), read anywhere.
    private volatile Phase _phase;

    // Driver thread only.
    private Connection? _core;
    private long _knownBidiLimit;
    private long _knownUniLimit;
    private ConnectionOptions? _pendingCoreOptions;
    private TlsHandshakeOptions? _pendingTls;
    private NetworkAddress _pendingRemote;
    private QuicSessionTicketStore? _ticketStore;
    private string? _ticketKey;
    private QuicSessionTicketStore.Entry _resumedFrom;

    // Interlocked, any thread: the first exception an app TLS callback threw (or a null it returned where a value is
    // required): the handshake fails and ConnectAsync / the listener's accept throw it, as System.Net.Quic does.
    private Exception? _callbackFailure;
    // Interlocked, any thread: set once by DisposeAsync; the host reference given back once.
    private int _disposed;
    private int _hostReleased;

    // Written on the driver thread, read anywhere.
    private volatile Exception? _endException;
    private IPEndPoint _localEndPoint;
    private IPEndPoint _remoteEndPoint;
    private string _targetHostName;
    private X509Certificate2? _remoteCertificate;
    private volatile bool _remoteCertificateExposed;
    private SslApplicationProtocol _applicationProtocol;
    private TlsCipherSuite _cipherSuite;
    private volatile bool _isResumed;
    private volatile bool _earlyDataAccepted;
    private volatile QuicConnectionStatistics _statistics = new();

    public ManagedConnection(ManagedDriverHost host, QuicConnection owner, QuicConnectionOptions options, ManagedListener? listener, IPEndPoint remote, string targetHostName)
    {
        _host = host;
        Owner = owner;
        _options = options;
        _listener = listener;
        _localEndPoint = host.Driver.LocalEndPoint;
        _remoteEndPoint = remote;
        _targetHostName = targetHostName;
    }

    public QuicConnection Owner { get; }

    /// <summary>The listener that created this server connection; null on a client.</summary>
    public ManagedListener? Listener => _listener;

    public ManagedDriverHost Host => _host;

    public Connection? Core => _core;

    /// <summary>Driver thread: the connection ended (closed, drained, timed out); the core must not be called any more.</summary>
    public bool IsEnded => _phase >= Phase.Ended;

    /// <summary>True once the driver no longer needs to drain this connection.</summary>
    public bool IsDetached => _phase == Phase.Detached;

    /// <summary>Driver thread: the handshake is not complete yet (early data may flow) and the connection has not ended.</summary>
    private bool IsHandshaking => _phase < Phase.Connected;

    /// <summary>Driver thread: moves the phase forward (never back; see <see cref="Phase"/>).</summary>
    private void MoveTo(Phase next)
    {
        Debug.Assert(next > _phase, $"{_phase} -> {next}");
        _phase = next;
    }

    public Exception? EndException => _endException;

    public long DefaultStreamErrorCode => _options.DefaultStreamErrorCode;

    public override IPEndPoint LocalEndPoint => _localEndPoint;

    public override IPEndPoint RemoteEndPoint => _remoteEndPoint;

    public override string TargetHostName => _targetHostName;

    /// <summary>
    /// The peer's certificate. As System.Net.Quic's ownership rule: the connection disposes it with itself unless the
    /// application took it through this getter (then it is the application's to dispose).
    /// </summary>
    public override X509Certificate? RemoteCertificate
    {
        get
        {
            _remoteCertificateExposed = true;
            return _remoteCertificate;
        }
    }

    public override SslApplicationProtocol NegotiatedApplicationProtocol => _applicationProtocol;

    public override TlsCipherSuite NegotiatedCipherSuite => _cipherSuite;

    public static async ValueTask<QuicConnection> ConnectAsync(QuicClientConnectionOptions options, CancellationToken cancellationToken)
    {
        SslClientAuthenticationOptions ssl = options.ClientAuthenticationOptions;
        ManagedOptionsMapping.RequireTls13(ssl.EnabledSslProtocols, nameof(options));
        string? targetHost = ssl.TargetHost;
        IPEndPoint remote;
        if (options.RemoteEndPoint is DnsEndPoint dns)
        {
            IPAddress[] addresses = await Dns.GetHostAddressesAsync(dns.Host, dns.AddressFamily, cancellationToken).ConfigureAwait(false);
            if (addresses.Length == 0) throw new SocketException((int)SocketError.HostNotFound);
            remote = new IPEndPoint(addresses[0], dns.Port);
            if (string.IsNullOrEmpty(targetHost)) targetHost = dns.Host;
        }
        else
        {
            remote = (IPEndPoint)options.RemoteEndPoint;
        }
        if (remote.Address.IsIPv4MappedToIPv6) remote = new IPEndPoint(remote.Address.MapToIPv4(), remote.Port);
        cancellationToken.ThrowIfCancellationRequested();
        if (remote.Port == 0) throw QuicExceptionFactory.InvalidRemotePort(); // as msquic: at once, not at the handshake timeout

        Socket socket = UdpSocketFactory.Bind(options.LocalEndPoint ?? UdpSocketFactory.DefaultLocalFor(remote));
        try
        {
            // A connected UDP socket receives the ICMP port-unreachable of a server that is not there (Linux
            // reports it as ECONNREFUSED), so a refused connection fails at once instead of at the handshake timeout.
            socket.Connect(remote);
        }
        catch (SocketException)
        {
            // Keep the unconnected socket: only the early refusal signal is lost.
        }
        var host = new ManagedDriverHost(socket, new Endpoint(new EndpointOptions { IsServer = false, LocalName = socket.LocalEndPoint?.ToString() ?? "", ConnectionCreated = QuicManagedDiagnostics.AttachTracer }), $"QuicManaged client {remote}", loop: UdpDriverLoop.ForClient(), multiPath: true);
        var owner = new QuicConnection();
        var connection = new ManagedConnection(host, owner, options, listener: null, remote, targetHost ?? "");
        if (socket.Connected && socket.LocalEndPoint is IPEndPoint bound) connection._localEndPoint = bound;
        owner.Impl = connection;
        host.Driver.SocketErrorHandler = connection.OnSocketError;
        connection._pendingTls = ManagedOptionsMapping.ToClientTls(ssl, targetHost, owner);
        byte[]? earlyParameters = connection.TakeSessionTicket(options, remote, targetHost ?? "");
        connection._pendingCoreOptions = ManagedOptionsMapping.ToConnectionOptions(options, remote, "client " + remote, host.Driver.MaxReceivableDatagram, earlyParameters);
        connection._pendingRemote = NetworkAddress.FromEndPoint(remote);
        host.Start();
        host.Post(new DriverCall(static (state, nowUs) => ((ManagedConnection)state).StartClient(nowUs), connection));

        try
        {
            using (cancellationToken.UnsafeRegister(static (state, token) => ((ManagedConnection)state!).CancelConnect(token), connection))
            {
                await connection._connected.Task.ConfigureAwait(false);
            }
            return owner;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // The caller's token ends the call at once (within 100 ms); closing and releasing the socket and
            // thread need a round trip to the driver thread, which a loaded machine may not schedule that soon.
            _ = DisposeInBackgroundAsync(connection);
            throw;
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    private static async Task DisposeInBackgroundAsync(ManagedConnection connection)
    {
        try
        {
            await connection.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Nobody is left to tell; the connection only had to be let go.
        }
    }

    private void CancelConnect(CancellationToken token)
    {
        _connected.TrySetCanceled(token);
        _handshake.TrySetCanceled(token);
    }

    /// <summary>
    /// Resumption (extension): takes a ticket from the store for this server into the TLS options. Returns the server's
    /// remembered transport parameters when 0-RTT will be offered (they bound the early data), else null.
    /// </summary>
    private byte[]? TakeSessionTicket(QuicClientConnectionOptions options, IPEndPoint remote, string targetHost)
    {
        if (options.SessionTicketStore is not { } store) return null;
        TlsHandshakeOptions tls = _pendingTls!;
        _ticketStore = store;
        _ticketKey = QuicSessionTicketStore.KeyFor(targetHost, remote, tls.ApplicationProtocols);
        if (!store.TryTake(_ticketKey, MonotonicClock.NowUs, out QuicSessionTicketStore.Entry entry)) return null;
        _resumedFrom = entry;
        tls.SessionTicket = entry.Ticket;
        // RFC 8446 §4.2.10: early data must use the ALPN the ticket was issued for; the server checks it too.
        bool sameProtocol = tls.ApplicationProtocols.Contains(entry.Ticket.ApplicationProtocol);
        tls.OfferEarlyData = options.EnableEarlyData && entry.Ticket.AllowsEarlyData && sameProtocol && entry.Ticket.PeerTransportParameters is not null;
        return tls.OfferEarlyData ? entry.Ticket.PeerTransportParameters : null;
    }

    private void StartClient(long nowUs)
    {
        if (_connected.Task.IsCompleted) return; // cancelled before it started
        _core = _host.Endpoint.Connect(_pendingCoreOptions!, new TlsCryptoHandshake(false, _pendingTls!), _pendingRemote, nowUs);
        _pendingCoreOptions = null;
        _pendingTls = null;
        _host.Add(this);
    }

    /// <summary>Driver thread: the endpoint created the server connection this object stands for.</summary>
    public void AttachServer(Connection core)
    {
        _core = core;
        _remoteEndPoint = core.RemoteAddress.ToEndPoint();
    }

    /// <summary>
    /// Any thread (the TLS engine's callbacks run on the driver thread): an app callback failed during the handshake;
    /// the first failure is what the handshake's waiters see.
    /// </summary>
    public void RecordCallbackFailure(Exception failure) => Interlocked.CompareExchange(ref _callbackFailure, failure, null);

    /// <summary>Completes when the handshake completed (server side: the listener waits on it).</summary>
    public Task HandshakeTask => _handshake.Task;

    private void OnSocketError(SocketError error)
    {
        // Only before the handshake: later an ICMP error may be transient, and the idle timeout decides. Decided in the
        // next step, after the rest of this receive batch: the kernel reports a pending ICMP error before the datagrams
        // already queued, and a server that closed its socket sent its CONNECTION_CLOSE (user_canceled, say) first.
        if (error == SocketError.ConnectionRefused && IsHandshaking)
        {
            _host.Post(new DriverCall(static (state, _) => ((ManagedConnection)state).OnRefused(), this));
        }
    }

    // Driver thread: the events of the batch first (a CONNECTION_CLOSE that was queued ends the connection with its own
    // error), then the refusal if nothing ended it.
    private void OnRefused()
    {
        ProcessEvents();
        if (IsHandshaking) End(QuicExceptionFactory.PeerUnreachable(), handshakeException: null);
    }

    /// <summary>Driver thread, after each step: turns core events into completions.</summary>
    public void ProcessEvents()
    {
        Connection? core = _core;
        if (core is not null && !IsEnded)
        {
            try
            {
                while (!IsEnded && core.TryDequeueEvent(out ConnectionEvent e)) Dispatch(core, e);
                if (!IsEnded) CheckPaths(core);
            }
            catch (Exception ex)
            {
                // A bug must not kill the driver thread (it serves other connections): fail this connection.
                End(new QuicException(QuicError.InternalError, null, null, "Internal error: " + ex.Message, ex), null);
            }
        }
        if (_closeWaiters.Count > 0)
        {
            // The close was posted in this step's work and flushed before this hook ran.
            foreach (TaskCompletionSource waiter in _closeWaiters) waiter.TrySetResult();
            _closeWaiters.Clear();
        }
        // Once ended nothing more is read from the core. Its closing or draining period still needs the socket and
        // thread (RFC 9000 §10.2: CONNECTION_CLOSE is repeated, late packets are absorbed); once it is over (the
        // endpoint disposed the core) this connection's reference on them goes, whether or not the app disposes it.
        if (_phase == Phase.Ended && IsCoreFinished) Detach();
    }

    /// <summary>Driver thread: no core, or its closing/draining period is over (or it closed silently).</summary>
    private bool IsCoreFinished => _core is null || _core.Phase == ConnectionPhase.Closed;

    /// <summary>Driver thread: the driver no longer drains this connection, and its reference on the socket and thread goes.</summary>
    private void Detach()
    {
        MoveTo(Phase.Detached);
        ReleaseHost();
    }

    private void Dispatch(Connection core, ConnectionEvent e)
    {
        switch (e.Kind)
        {
            case ConnectionEventKind.HandshakeCompleted:
                OnHandshakeCompleted(core);
                break;
            case ConnectionEventKind.StreamOpened:
            {
                bool unidirectional = (e.StreamId & 2) != 0;
                var stream = new ManagedStream(this, e.StreamId, canRead: true, canWrite: !unidirectional);
                _streams[e.StreamId] = stream;
                // What arrived with the opening frames moves into the stream's buffer before the application sees the
                // stream (its StreamReadable event comes later in this batch): the first ReadAsync then completes
                // synchronously instead of waiting for another turn of the driver and a thread-pool hop.
                stream.OnReadable();
                _inbound.Writer.TryWrite(new QuicStream(stream));
                break;
            }
            case ConnectionEventKind.StreamReadable:
                if (_streams.TryGetValue(e.StreamId, out ManagedStream? readable)) readable.OnReadable();
                break;
            case ConnectionEventKind.StreamWritable:
                if (_streams.TryGetValue(e.StreamId, out ManagedStream? writable)) writable.OnWritable();
                break;
            case ConnectionEventKind.StreamsAvailable:
                OnStreamsAvailable(core);
                break;
            case ConnectionEventKind.EarlyDataReady:
                OnEarlyDataReady(core);
                break;
            case ConnectionEventKind.SessionTicketReceived:
                while (core.TryTakeSessionTicket(out TlsSessionTicket ticket))
                {
                    // Not after disposal: the certificate may be disposed with the connection (see RemoteCertificate).
                    if (Volatile.Read(ref _disposed) != 0) continue;
                    _ticketStore?.Add(_ticketKey!, ticket, _remoteCertificate is { } c ? X509CertificateLoader.LoadCertificate(c.RawData) : null);
                }
                break;
            case ConnectionEventKind.DatagramReceived:
                OnDatagramsReceived(core);
                break;
            case ConnectionEventKind.DatagramOutcome:
                OnDatagramOutcomes(core);
                break;
            case ConnectionEventKind.Closed:
            {
                ConnectionError? error = e.Error ?? core.Error;
                End(QuicExceptionFactory.ForConnection(error), IsHandshaking ? QuicExceptionFactory.ForHandshake(error) : null);
                break;
            }
        }
    }

    private void OnHandshakeCompleted(Connection core)
    {
        if (!IsHandshaking) return;
        MoveTo(Phase.Connected);
        ICryptoHandshake tls = core.Handshake;
        _applicationProtocol = tls.NegotiatedApplicationProtocol;
        _cipherSuite = tls.NegotiatedCipherSuite;
        // The TLS engine only reads the peer's certificate during the handshake (validation, CertificateVerify) and never
        // disposes it: it is handed over as is. A copy here cost a second DER parse per connection (~0.1-0.25 ms on
        // the connecting path) and left one more native handle to the finalizer.
        if (tls.RemoteCertificate is { } certificate) _remoteCertificate = certificate;
        if (core.IsServer) _targetHostName = tls.ServerName ?? "";
        _isResumed = tls.IsResumed;
        _earlyDataAccepted = tls.EarlyDataAccepted;
        // A resumed TLS 1.3 handshake sends no certificate: report the one validated when the ticket was issued.
        if (_remoteCertificate is null && _isResumed && _resumedFrom.Certificate is { } original)
        {
            _remoteCertificate = X509CertificateLoader.LoadCertificate(original.RawData);
        }
        _remoteEndPoint = core.RemoteAddress.ToEndPoint();
        OnDatagramsNegotiated(core);
        _handshake.TrySetResult();
        _connected.TrySetResult();
        _listener?.OnHandshakeCompleted(this);
        OnStreamsAvailable(core);
    }

    /// <summary>Client: 0-RTT keys are ready; with EnableEarlyData, ConnectAsync returns now and streams carry early data.</summary>
    private void OnEarlyDataReady(Connection core)
    {
        if (_phase != Phase.Connecting || _resumedFrom.Ticket is not { } ticket) return;
        MoveTo(Phase.EarlyData);
        // What the server will confirm if it accepts the early data (it must choose the same ALPN, RFC 8446 §4.2.10).
        _applicationProtocol = ticket.ApplicationProtocol;
        _cipherSuite = ticket.CipherSuite;
        _connected.TrySetResult();
        OnStreamsAvailable(core);
    }

    private void OnStreamsAvailable(Connection core)
    {
        if (_phase is not (Phase.EarlyData or Phase.Connected)) return;
        RetryOpens();
        // As msquic's STREAMS_AVAILABLE in System.Net.Quic: an increase is reported only once streams are available
        // beyond those opened and those waiting to open (pending opens use the new room first); it then covers every
        // raise not reported yet, so the sum of the increments minus the opens is the room left.
        int bidiIncrement = StreamCapacityIncrement(core.Streams.LocalBidiLimit, ref _knownBidiLimit, kind: 0);
        int uniIncrement = StreamCapacityIncrement(core.Streams.LocalUniLimit, ref _knownUniLimit, kind: 1);
        if ((bidiIncrement | uniIncrement) != 0 && _options.StreamCapacityCallback is { } callback)
        {
            try
            {
                callback(Owner, new QuicStreamCapacityChangedArgs { BidirectionalIncrement = bidiIncrement, UnidirectionalIncrement = uniIncrement });
            }
            catch
            {
                // An app callback failing must not take the I/O thread down (System.Net.Quic ignores it too).
            }
        }
    }

    /// <summary>Driver thread: a snapshot of the core's counters (taken on request and once more when the connection ends).</summary>
    private void TakeStatistics()
    {
        if (_core is not { } core || IsDetached) return;
        ConnectionStatistics c = core.Statistics;
        var statistics = new QuicConnectionStatistics
        {
            DatagramsSent = c.DatagramsSent,
            DatagramsReceived = c.DatagramsReceived,
            BytesSent = c.BytesSent,
            BytesReceived = c.BytesReceived,
            PacketsSent = c.PacketsSent,
            PacketsReceived = c.PacketsReceived,
            PacketsLost = c.PacketsLost,
            StreamBytesRetransmitted = c.StreamBytesRetransmitted,
            SmoothedRtt = core.Rtt.HasSample ? TimeSpan.FromTicks(core.Rtt.SmoothedRttUs * 10) : TimeSpan.Zero,
            CongestionWindow = core.CongestionController.CongestionWindow,
            KeyUpdates = c.KeyUpdates,
            Retried = core.Retried,
        };
        AddDatagramStatistics(statistics, c);
        AddPathStatistics(statistics, core);
        _statistics = statistics;
    }

    public override bool IsResumed => _isResumed;

    public override bool IsEarlyDataAccepted => _earlyDataAccepted;

    public override async ValueTask WaitForHandshakeAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        await _handshake.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    public override QuicConnectionStatistics GetStatistics()
    {
        if (_host.Driver.IsDriverThread)
        {
            TakeStatistics();
        }
        else if (!IsDetached && !_host.IsDisposed)
        {
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _host.Post(new DriverCall(static (state, _) =>
            {
                var (connection, completion) = ((ManagedConnection, TaskCompletionSource))state;
                connection.TakeStatistics();
                completion.TrySetResult();
            }, (this, done)));
            done.Task.Wait(TimeSpan.FromSeconds(2));
        }
        return _statistics;
    }

    public override async ValueTask<bool> UpdateKeysAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        if (_endException is { } ended) throw Rethrowable(ended);
        cancellationToken.ThrowIfCancellationRequested();
        var request = new KeyUpdateRequest(this);
        _host.Post(new DriverCall(static (state, _) => ((KeyUpdateRequest)state).Run(), request));
        return await request.Done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Driver thread: starts a key update if RFC 9001 §6 allows it now (the core checks that the handshake is confirmed
    /// and that a packet of the current phase was acknowledged); the next packet sent carries the new key phase.
    /// </summary>
    private void UpdateKeysOnDriver(TaskCompletionSource<bool> done)
    {
        if (IsEnded)
        {
            done.TrySetException(Rethrowable(_endException));
            return;
        }
        if (_core is null)
        {
            done.TrySetResult(false); // the client's core starts in the posted StartClient: nothing to update yet
            return;
        }
        if (_core.Phase != ConnectionPhase.Open)
        {
            // Closed by the app (CloseAsync) or the peer, waiting out its closing period: report it like other calls.
            done.TrySetException(QuicExceptionFactory.OperationAborted("The connection was closed."));
            return;
        }
        done.TrySetResult(_core.InitiateKeyUpdate());
    }

    /// <summary>Driver thread: the connection is over; every waiter learns why.</summary>
    private void End(Exception exception, Exception? handshakeException)
    {
        if (IsEnded) return;
        bool handshaking = IsHandshaking;
        TakeStatistics();
        MoveTo(Phase.Ended);
        _lifetime.TrySetResult();
        _endException = exception;
        FailMigration(exception);
        Exception failure = (handshaking ? Volatile.Read(ref _callbackFailure) : null) ?? handshakeException ?? exception;
        if (!_handshake.Task.IsCompleted && _handshake.TrySetException(failure)) _ = _handshake.Task.Exception;
        if (!_connected.Task.IsCompleted && _connected.TrySetException(failure)) _ = _connected.Task.Exception;
        _inbound.Writer.TryComplete(exception);
        EndDatagrams(exception);
        FailPendingOpens(exception);
        foreach (ManagedStream stream in _streams.Values) stream.OnConnectionEnded(exception);
        _streams.Clear();
        if (handshaking) _listener?.OnHandshakeFailed(this, failure);
    }

    public void RemoveStream(long id) => _streams.Remove(id);

    /// <summary>Completes when the connection ended (closed, lost or timed out) or the app disposed it: a stream's disposal waits no longer.</summary>
    public Task Lifetime => _lifetime.Task;

    public override async ValueTask<QuicStream> AcceptInboundStreamAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        if (_options.MaxInboundBidirectionalStreams == 0 && _options.MaxInboundUnidirectionalStreams == 0)
        {
            throw new InvalidOperationException("Accepting streams needs MaxInboundBidirectionalStreams or MaxInboundUnidirectionalStreams above zero.");
        }
        try
        {
            return await _inbound.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
            throw Rethrowable(_endException);
        }
    }

    /// <summary>A fresh exception of the same kind for each throw (one instance thrown from many awaits would mix stack traces).</summary>
    private static Exception Rethrowable(Exception? e) => e switch
    {
        QuicException q => new QuicException(q.QuicError, q.ApplicationErrorCode, q.TransportErrorCode, q.Message, q.InnerException),
        null => QuicExceptionFactory.OperationAborted("The connection was closed."),
        _ => e,
    };

    public override async ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        // As System.Net.Quic over msquic: once the connection is over (an earlier close ended it before completing),
        // nothing is left to do or wait for and the token is not looked at. Otherwise the connection is closed all the
        // same, but a token already cancelled always ends the call with OperationCanceledException (not only when the
        // close did not complete first).
        if (_endException is not null) return;
        Task close = CloseCoreAsync(errorCode);
        cancellationToken.ThrowIfCancellationRequested();
        await close.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    private Task CloseCoreAsync(long errorCode)
    {
        if (_host.IsDisposed) return Task.CompletedTask;
        var request = new CloseRequest(this, (ulong)errorCode);
        _host.Post(new DriverCall(static (state, nowUs) => ((CloseRequest)state).Run(nowUs), request,
            static state => ((CloseRequest)state).Done.TrySetResult())); // the driver is gone: nothing left to close
        return request.Done.Task;
    }

    /// <summary>Driver thread: sends CONNECTION_CLOSE (RFC 9000 §10.2) unless already closed; completes after the flush.</summary>
    public void CloseOnDriver(ulong errorCode, TaskCompletionSource done, long nowUs)
    {
        if (!IsEnded && _core is not null) _core.Close(errorCode, null, nowUs);
        if (_core is null)
        {
            _handshake.TrySetCanceled();
            _connected.TrySetCanceled();
        }
        _closeWaiters.Add(done);
        // The waiter completes in this step's event drain, after the flush that sends CONNECTION_CLOSE: the core is
        // offered to it even when it had nothing left to close (already ended); without a core in the endpoint, now.
        if (_core is null || IsDetached || _core.Slot.Index < 0) ProcessEvents();
        else _host.Endpoint.Wake(_core);
    }

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        _lifetime.TrySetResult();
        if (!_host.IsDisposed)
        {
            long code = _options.DefaultCloseErrorCode < 0 ? 0 : _options.DefaultCloseErrorCode;
            bool wedged = false;
            try
            {
                // Bounded: a wedged driver must not hang disposal.
                await CloseCoreAsync(code).WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                wedged = true;
            }
            _host.Post(new DriverCall(static (state, _) => ((ManagedConnection)state).DisposeOnDriver(), this));
            // Otherwise the driver releases the host reference when the closing period ends (RFC 9000 §10.2.1: the
            // socket stays to repeat CONNECTION_CLOSE to a peer whose copy was lost); disposal does not wait for it.
            if (wedged) ReleaseHost();
        }
        else
        {
            ReleaseHost();
        }
        _inbound.Writer.TryComplete();
        while (_inbound.Reader.TryRead(out QuicStream? unaccepted)) await unaccepted.DisposeAsync().ConfigureAwait(false);
        if (!_remoteCertificateExposed) _remoteCertificate?.Dispose();
    }

    private void DisposeOnDriver()
    {
        End(QuicExceptionFactory.OperationAborted("The connection was disposed."), null);
        // The host reference goes when the core's closing period is over (ProcessEvents), at once when there is none.
        if (_phase == Phase.Ended && IsCoreFinished) Detach();
    }

    /// <summary>Gives back this connection's reference on the socket and thread (once).</summary>
    public void ReleaseHost()
    {
        if (Interlocked.Exchange(ref _hostReleased, 1) == 0) _host.Release();
    }

    public override string ToString() => $"QuicConnection {_localEndPoint} -> {_remoteEndPoint}";

    /// <summary>An UpdateKeysAsync posted to the driver.</summary>
    private sealed class KeyUpdateRequest
    {
        private readonly ManagedConnection _connection;

        public KeyUpdateRequest(ManagedConnection connection) => _connection = connection;

        public TaskCompletionSource<bool> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Run() => _connection.UpdateKeysOnDriver(Done);
    }

    /// <summary>A CloseAsync/DisposeAsync posted to the driver.</summary>
    private sealed class CloseRequest
    {
        private readonly ManagedConnection _connection;
        private readonly ulong _code;

        public CloseRequest(ManagedConnection connection, ulong code)
        {
            _connection = connection;
            _code = code;
        }

        public TaskCompletionSource Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Run(long nowUs) => _connection.CloseOnDriver(_code, Done, nowUs);
    }
}
