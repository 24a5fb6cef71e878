using System;
using System.Collections.Generic;
using System.Net.Quic.Managed;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;

namespace QuicManaged.AspNetCore;

/// <summary>
/// One QUIC connection as Kestrel's HTTP/3 sees it: accepts the client's streams, opens the server's (control, QPACK),
/// closes with the error code Kestrel set through <see cref="IProtocolErrorCodeFeature"/>.
/// </summary>
internal sealed partial class QuicManagedConnectionContext : MultiplexedConnectionContext, IProtocolErrorCodeFeature, ITlsConnectionFeature
{
    private static long s_lastId;

    private readonly QuicConnection _connection;
    private readonly QuicManagedTransportOptions _options;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _closed = new();
    private readonly Lock _shutdownLock = new();
    private readonly FeatureCollection _features = new();
    private IDictionary<object, object?> _items = new Dictionary<object, object?>();
    private Task? _closeTask;
    private ConnectionAbortedException? _abortReason;
    private long? _error;
    private X509Certificate2? _clientCertificate;
    private bool _clientCertificateSet;
    // Request stream contexts that ended cleanly, for the next request streams (as Kestrel's own transport pools them).
    private readonly Stack<QuicManagedStreamContext> _streamPool = new();
    private bool _poolClosed;

    public QuicManagedConnectionContext(QuicConnection connection, QuicManagedTransportOptions options, ILogger logger)
    {
        _connection = connection;
        _options = options;
        _logger = logger;
        ConnectionId = "qm" + Interlocked.Increment(ref s_lastId).ToString("x", System.Globalization.CultureInfo.InvariantCulture);
        ConnectionClosed = _closed.Token;
        _features.Set<IProtocolErrorCodeFeature>(this);
        _features.Set<ITlsConnectionFeature>(this);
    }

    internal QuicManagedTransportOptions Options => _options;

    internal ILogger Logger => _logger;

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features => _features;

    public override IDictionary<object, object?> Items { get => _items; set => _items = value; }

    /// <summary>The error code the connection closes with (Kestrel sets it before <see cref="Abort(ConnectionAbortedException)"/>); -1 when unset.</summary>
    public long Error
    {
        get => _error ?? -1;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            _error = value;
        }
    }

    public X509Certificate2? ClientCertificate
    {
        get
        {
            if (!_clientCertificateSet)
            {
                _clientCertificate = _connection.RemoteCertificate switch
                {
                    null => null,
                    X509Certificate2 c2 => c2,
                    X509Certificate c => X509CertificateLoader.LoadCertificate(c.GetRawCertData()),
                };
                _clientCertificateSet = true;
            }

            return _clientCertificate;
        }
        set
        {
            _clientCertificate = value;
            _clientCertificateSet = true;
        }
    }

    public Task<X509Certificate2?> GetClientCertificateAsync(CancellationToken cancellationToken) => Task.FromResult(ClientCertificate);

    /// <summary>The handshake completed and Kestrel takes the connection: endpoints are final now.</summary>
    internal void OnAccepted()
    {
        LocalEndPoint = _connection.LocalEndPoint;
        RemoteEndPoint = _connection.RemoteEndPoint;
    }

    public override async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            QuicStream stream = await _connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
            QuicManagedStreamContext? context = null;
            if (stream.CanRead && stream.CanWrite)
            {
                lock (_streamPool)
                {
                    _streamPool.TryPop(out context);
                }
            }

            if (context is null)
            {
                context = new QuicManagedStreamContext(this, stream);
            }
            else
            {
                context.Initialize(stream);
            }

            context.Start();
            return context;
        }
        catch (QuicException ex) when (ex.QuicError == QuicError.ConnectionAborted)
        {
            // The client closed the connection (CONNECTION_CLOSE with an application error code).
            _error = ex.ApplicationErrorCode;
            LogPeerClosed(_logger, ConnectionId, ex.ApplicationErrorCode ?? -1);
            CancelClosedToken();
            throw new ConnectionResetException(ex.Message, ex);
        }
        catch (QuicException ex) when (ex.QuicError is QuicError.ConnectionIdle or QuicError.ConnectionTimeout or QuicError.TransportError or QuicError.InternalError)
        {
            Abort(new ConnectionAbortedException("The QUIC connection ended: " + ex.Message, ex));
            CancelClosedToken();
            throw _abortReason!;
        }
        catch (Exception ex) when (ex is QuicException or OperationCanceledException or ObjectDisposedException)
        {
            // Our own close (Abort / DisposeAsync) or Kestrel's cancellation.
            lock (_shutdownLock)
            {
                if (_abortReason is not null)
                {
                    throw _abortReason;
                }
            }

            return null;
        }
    }

    public override async ValueTask<ConnectionContext> ConnectAsync(IFeatureCollection? features = null, CancellationToken cancellationToken = default)
    {
        // Kestrel opens its control and QPACK streams as unidirectional (a direction feature that cannot read).
        IStreamDirectionFeature? direction = features?.Get<IStreamDirectionFeature>();
        QuicStreamType type = direction is { CanRead: false } ? QuicStreamType.Unidirectional : QuicStreamType.Bidirectional;
        QuicStream stream;
        try
        {
            stream = await _connection.OpenOutboundStreamAsync(type, cancellationToken).ConfigureAwait(false);
        }
        catch (QuicException ex)
        {
            throw new ConnectionAbortedException("Could not open a QUIC stream: " + ex.Message, ex);
        }

        var context = new QuicManagedStreamContext(this, stream);
        context.Start();
        return context;
    }

    /// <summary>A request stream context that ended cleanly: kept for a later stream, up to the stream limit.</summary>
    internal void ReturnStream(QuicManagedStreamContext context)
    {
        lock (_streamPool)
        {
            if (!_poolClosed && _streamPool.Count < _options.MaxBidirectionalStreamCount)
            {
                _streamPool.Push(context);
            }
        }
    }

    public override void Abort() => Abort(new ConnectionAbortedException("The connection was aborted by the application."));

    public override void Abort(ConnectionAbortedException abortReason)
    {
        lock (_shutdownLock)
        {
            if (_abortReason is not null || _closeTask is not null)
            {
                return;
            }

            _abortReason = abortReason;
            long code = _error ?? _options.DefaultCloseErrorCode;
            LogAbort(_logger, ConnectionId, code, abortReason.Message);
            _closeTask = CloseQuietlyAsync(code);
        }
    }

    private async Task CloseQuietlyAsync(long code)
    {
        try
        {
            await _connection.CloseAsync(code).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException)
        {
            // Already closed by the peer or by an error: nothing left to say.
        }
    }

    private void CancelClosedToken()
    {
        try
        {
            _closed.Cancel();
        }
        catch (AggregateException ex)
        {
            LogCallbackFailed(_logger, ex);
        }
    }

    public override async ValueTask DisposeAsync()
    {
        Task close;
        lock (_shutdownLock)
        {
            close = _closeTask ??= CloseQuietlyAsync(_error ?? _options.DefaultCloseErrorCode);
        }

        await close.ConfigureAwait(false);
        await _connection.DisposeAsync().ConfigureAwait(false);
        lock (_streamPool)
        {
            _poolClosed = true;
            _streamPool.Clear();
        }

        CancelClosedToken();
        _closed.Dispose();
    }

    private static void LogPeerClosed(ILogger logger, string connectionId, long errorCode) => TransportLog.ConnectionPeerClosed(logger, connectionId, errorCode);

    private static void LogAbort(ILogger logger, string connectionId, long errorCode, string reason) => TransportLog.ConnectionAbort(logger, connectionId, errorCode, reason);

    private static void LogCallbackFailed(ILogger logger, Exception exception) => TransportLog.ConnectionCallbackFailed(logger, exception);
}
