using System;
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;

namespace QuicManaged.AspNetCore;

/// <summary>One bound HTTP/3 endpoint: a QuicManaged <see cref="QuicListener"/> whose connections Kestrel accepts.</summary>
internal sealed partial class QuicManagedConnectionListener : IMultiplexedConnectionListener
{
    private readonly QuicManagedTransportOptions _options;
    private readonly ILogger _logger;
    private readonly TlsConnectionCallbackOptions _tls;
    private readonly IPEndPoint _requestedEndPoint;

    // The connection context is created in the options callback (Kestrel's TLS callback gets it) and picked up when the
    // connection is accepted; a weak table because a connection whose handshake fails is never accepted.
    private readonly ConditionalWeakTable<QuicConnection, QuicManagedConnectionContext> _pending = new();
    private QuicListener? _listener;
    private int _disposed;

    public QuicManagedConnectionListener(QuicManagedTransportOptions options, ILogger logger, EndPoint endpoint, TlsConnectionCallbackOptions tls)
    {
        if (endpoint is not IPEndPoint ip)
        {
            throw new InvalidOperationException($"QUIC listens on IP endpoints only, not {endpoint.GetType().Name}.");
        }

        _options = options;
        _logger = logger;
        _tls = tls;
        _requestedEndPoint = ip;
        EndPoint = ip;
    }

    public EndPoint EndPoint { get; private set; }

    public async ValueTask StartAsync(CancellationToken cancellationToken)
    {
        var listenerOptions = new QuicListenerOptions
        {
            ListenEndPoint = _requestedEndPoint,
            ApplicationProtocols = _tls.ApplicationProtocols,
            ListenBacklog = _options.Backlog,
            ConnectionOptionsCallback = OnConnectionAsync,
        };
        try
        {
            _listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed, cancellationToken).ConfigureAwait(false);
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            throw new AddressInUseException(ex.Message, ex);
        }

        // Port 0 resolves to the real port here; Kestrel reads EndPoint back.
        EndPoint = _listener.LocalEndPoint;
        LogListening(_logger, EndPoint);
    }

    private async ValueTask<QuicServerConnectionOptions> OnConnectionAsync(QuicConnection connection, SslClientHelloInfo hello, CancellationToken cancellationToken)
    {
        var context = new QuicManagedConnectionContext(connection, _options, _logger);
        _pending.AddOrUpdate(connection, context);
        SslServerAuthenticationOptions ssl = await _tls.OnConnection(new TlsConnectionCallbackContext
        {
            ClientHelloInfo = hello,
            State = _tls.OnConnectionState,
            Connection = context,
        }, cancellationToken).ConfigureAwait(false);
        ssl.ApplicationProtocols ??= _tls.ApplicationProtocols;
        if (ssl.ServerCertificate is null && ssl.ServerCertificateContext is null && ssl.ServerCertificateSelectionCallback is null)
        {
            LogNoCertificate(_logger, EndPoint);
        }

        return new QuicServerConnectionOptions
        {
            ServerAuthenticationOptions = ssl,
            IdleTimeout = _options.IdleTimeout,
            MaxInboundBidirectionalStreams = _options.MaxBidirectionalStreamCount,
            MaxInboundUnidirectionalStreams = _options.MaxUnidirectionalStreamCount,
            DefaultStreamErrorCode = _options.DefaultStreamErrorCode,
            DefaultCloseErrorCode = _options.DefaultCloseErrorCode,
        };
    }

    public async ValueTask<MultiplexedConnectionContext?> AcceptAsync(IFeatureCollection? features = null, CancellationToken cancellationToken = default)
    {
        QuicListener listener = _listener ?? throw new InvalidOperationException("The listener is not started.");
        while (true)
        {
            QuicConnection connection;
            try
            {
                connection = await listener.AcceptConnectionAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (QuicException ex) when (ex.QuicError == QuicError.OperationAborted)
            {
                return null; // the listener was disposed (unbind)
            }
            catch (ObjectDisposedException)
            {
                return null;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return null;
            }
            catch (Exception ex) when (ex is AuthenticationException or QuicException or ArgumentException)
            {
                // One client's failed handshake or a bad options callback: keep accepting the others.
                LogHandshakeFailed(_logger, ex);
                continue;
            }

            if (!_pending.TryGetValue(connection, out QuicManagedConnectionContext? context))
            {
                context = new QuicManagedConnectionContext(connection, _options, _logger);
            }
            else
            {
                _pending.Remove(connection);
            }

            context.OnAccepted();
            return context;
        }
    }

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default) => DisposeAsync();

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_listener is not null)
        {
            await _listener.DisposeAsync().ConfigureAwait(false);
        }
    }

    private static void LogListening(ILogger logger, EndPoint endPoint) => TransportLog.Listening(logger, endPoint);

    private static void LogNoCertificate(ILogger logger, EndPoint endPoint) => TransportLog.NoCertificate(logger, endPoint);

    private static void LogHandshakeFailed(ILogger logger, Exception exception) => TransportLog.HandshakeFailed(logger, exception);
}
