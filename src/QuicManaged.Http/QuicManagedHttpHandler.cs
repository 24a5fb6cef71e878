using System.Net;
using System.Net.Security;

namespace QuicManaged.Http;

/// <summary>
/// An <see cref="HttpMessageHandler"/> that speaks HTTP/3 (RFC 9114, QPACK RFC 9204) over QuicManaged's managed QUIC:
/// no libmsquic needed. One QUIC connection per authority (scheme, host, port), reused by concurrent requests; request
/// and response bodies stream; response trailers land in <see cref="HttpResponseMessage.TrailingHeaders"/>.
/// <para>
/// Versions follow <see cref="HttpRequestMessage.VersionPolicy"/>: a request for 3.0 with <see cref="HttpVersionPolicy.RequestVersionExact"/>
/// or <see cref="HttpVersionPolicy.RequestVersionOrHigher"/>, or any version with <c>OrHigher</c>, goes over HTTP/3; a request
/// that allows a lower version (<c>OrLower</c>, or a version below 3 with <c>Exact</c>/<c>OrLower</c>) goes to
/// <see cref="FallbackHandler"/> when HTTP/3 is not possible or not asked for (without one, it fails with
/// <see cref="HttpRequestException"/>).
/// </para>
/// </summary>
public sealed class QuicManagedHttpHandler : HttpMessageHandler
{
    private readonly Dictionary<(string Host, int Port), List<Http3ClientConnection>> _connections = new();
    private readonly Lock _lock = new();
    private bool _disposed;

    /// <summary>TLS options for every connection: certificate validation callback, client certificates. ALPN is always h3; the target host is the request's.</summary>
    public SslClientAuthenticationOptions SslOptions { get; set; } = new();

    /// <summary>QUIC handshake limit of every connection attempt: 10 s, msquic's default, which SocketsHttpHandler's HTTP/3 uses.</summary>
    internal static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    private TimeSpan _connectTimeout = Timeout.InfiniteTimeSpan;

    /// <summary>
    /// Time allowed for opening a connection (name resolution and the QUIC handshake), as
    /// <c>SocketsHttpHandler.ConnectTimeout</c>: default <see cref="Timeout.InfiniteTimeSpan"/>. When it elapses the
    /// request fails with a <see cref="TaskCanceledException"/> whose inner <see cref="TimeoutException"/> says so, as
    /// SocketsHttpHandler's does. A server that never answers fails the handshake after 10 s in any case (the QUIC
    /// handshake timeout, as with msquic): an <see cref="HttpRequestException"/> with <see cref="HttpRequestError.ConnectionError"/>.
    /// </summary>
    public TimeSpan ConnectTimeout
    {
        get => _connectTimeout;
        set
        {
            if (value <= TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "ConnectTimeout must be positive or Timeout.InfiniteTimeSpan.");
            }

            _connectTimeout = value;
        }
    }

    /// <summary>QUIC idle timeout of the connections (<see cref="TimeSpan.Zero"/>: the transport default).</summary>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.Zero;

    /// <summary>Largest response header section accepted (SETTINGS_MAX_FIELD_SECTION_SIZE), in bytes. Default 64 KiB.</summary>
    public int MaxResponseHeadersLength { get; set; } = 64 * 1024;

    /// <summary>SETTINGS_QPACK_MAX_TABLE_CAPACITY advertised: the dynamic table the servers' encoders may use (RFC 9204 §3.2.3).</summary>
    internal long QpackMaxTableCapacity { get; set; } = 4096;

    /// <summary>SETTINGS_QPACK_BLOCKED_STREAMS advertised (RFC 9204 §2.1.2).</summary>
    internal int QpackBlockedStreams { get; set; } = 16;

    /// <summary>How many connections are pooled for <paramref name="uri"/>'s authority (tests).</summary>
    internal int PooledConnectionCount(Uri uri)
    {
        lock (_lock)
        {
            return _connections.GetValueOrDefault((uri.IdnHost, uri.Port))?.Count ?? 0;
        }
    }

    /// <summary>The pooled connection for <paramref name="uri"/>'s authority, if any (tests).</summary>
    internal Http3ClientConnection? GetPooledConnection(Uri uri)
    {
        lock (_lock)
        {
            return _connections.GetValueOrDefault((uri.IdnHost, uri.Port))?.FirstOrDefault();
        }
    }

    /// <summary>
    /// Whether a request that finds every pooled connection to its authority at the server's concurrent-stream limit
    /// (MAX_STREAMS) opens another connection (true) or waits for a stream on the existing one (false, the default), as
    /// <c>SocketsHttpHandler.EnableMultipleHttp3Connections</c>.
    /// </summary>
    public bool EnableMultipleHttp3Connections { get; set; }

    /// <summary>
    /// How long a request with <c>Expect: 100-continue</c> holds its body back waiting for a 100 (Continue) or a final
    /// response; <see cref="Timeout.InfiniteTimeSpan"/> waits indefinitely. Default 1 s, as <c>SocketsHttpHandler.Expect100ContinueTimeout</c>.
    /// A final status of 300 or more received first means the body is not sent.
    /// </summary>
    public TimeSpan Expect100ContinueTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Handler for requests that may or must use HTTP/1.1 or HTTP/2 (see the class remarks); null: such requests fail.</summary>
    public HttpMessageHandler? FallbackHandler { get; set; }

    /// <inheritdoc />
    protected override HttpResponseMessage Send(HttpRequestMessage request, CancellationToken cancellationToken)
        => SendAsync(request, cancellationToken).GetAwaiter().GetResult();

    /// <inheritdoc />
    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        ObjectDisposedException.ThrowIf(_disposed, this);
        Uri uri = request.RequestUri ?? throw new InvalidOperationException("The request has no RequestUri.");
        if (!uri.IsAbsoluteUri)
        {
            throw new InvalidOperationException("The request URI must be absolute.");
        }

        // 3.0 Exact/OrHigher: HTTP/3 only. 3.0 OrLower: HTTP/3, else the fallback. Below 3.0 OrHigher: HTTP/3, else the
        // fallback. Below 3.0 Exact/OrLower: never HTTP/3 (the fallback or an error), as SocketsHttpHandler does.
        bool belowHttp3 = request.Version < HttpVersion.Version30;
        bool wantsHttp3 = !belowHttp3 || request.VersionPolicy == HttpVersionPolicy.RequestVersionOrHigher;
        bool mayFallBack = belowHttp3 || request.VersionPolicy == HttpVersionPolicy.RequestVersionOrLower;
        bool https = string.Equals(uri.Scheme, Uri.UriSchemeHttps, StringComparison.OrdinalIgnoreCase);
        if (!wantsHttp3 || !https)
        {
            if (FallbackHandler is not null && mayFallBack)
            {
                return await FallBackAsync(request, cancellationToken).ConfigureAwait(false);
            }

            throw new HttpRequestException(HttpRequestError.VersionNegotiationError,
                !https ? $"HTTP/3 needs https, not {uri.Scheme}" + (mayFallBack ? ", and no FallbackHandler is set." : ", and the version policy excludes lower versions.")
                       : $"HTTP/{request.Version} with {request.VersionPolicy} excludes HTTP/3, and no FallbackHandler is set.");
        }

        for (int attempt = 0; ; attempt++)
        {
            Http3ClientConnection connection;
            bool reserved;
            try
            {
                connection = GetOrAddConnection(uri, out reserved);
                if (!connection.Connected.IsCompletedSuccessfully)
                {
                    await WaitConnectedAsync(connection, reserved, cancellationToken).ConfigureAwait(false);
                }

                // A connection that was still handshaking: take a stream if it has one; if not, the request waits inside it.
                reserved = reserved || (EnableMultipleHttp3Connections && connection.TryReserveStream());
            }
            catch (Exception ex) when (mayFallBack && FallbackHandler is not null
                && (ex is HttpRequestException || (ex is OperationCanceledException && !cancellationToken.IsCancellationRequested)))
            {
                // No HTTP/3 connection (refused, timed out, ConnectTimeout elapsed): the request may use a lower version.
                return await FallBackAsync(request, cancellationToken).ConfigureAwait(false);
            }

            try
            {
                return await connection.SendAsync(request, reserved, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException ex) when (cancellationToken.IsCancellationRequested
                && !(ex is TaskCanceledException && ex.CancellationToken == cancellationToken))
            {
                // The caller cancelled: a TaskCanceledException for the caller's token, as SocketsHttpHandler's HTTP/3 throws.
                throw new TaskCanceledException(ex.Message, ex, cancellationToken);
            }
            catch (Http3RetryException) when (attempt < 2)
            {
                // The server did not process the request (GOAWAY or H3_REQUEST_REJECTED): safe to send again on a new connection.
                Remove(connection);
            }
            catch (Http3RetryException retry)
            {
                throw new HttpRequestException(HttpRequestError.HttpProtocolError, retry.Message, retry.InnerException);
            }
        }
    }

    private Task<HttpResponseMessage> FallBackAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        if (request.Version >= HttpVersion.Version30)
        {
            // A 3.0-or-lower request the fallback serves: it gets HTTP/2 or HTTP/1.1 there, not another HTTP/3 attempt.
            request.Version = HttpVersion.Version20;
        }

        return new ForwardingInvoker(FallbackHandler!).SendAsync(request, cancellationToken);
    }

    /// <summary>
    /// A connection for the authority (connected or still connecting), and whether one of its streams was reserved for
    /// the request. With <see cref="EnableMultipleHttp3Connections"/> a connection with a free stream is preferred and,
    /// when every connected one is at its limit, a new connection is opened; otherwise there is one connection per
    /// authority and a request beyond the server's stream limit waits inside it for MAX_STREAMS.
    /// </summary>
    private Http3ClientConnection GetOrAddConnection(Uri uri, out bool reserved)
    {
        (string Host, int Port) key = (uri.IdnHost, uri.Port);
        Http3ClientConnection? connection = null;
        reserved = false;
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (!_connections.TryGetValue(key, out List<Http3ClientConnection>? pool))
            {
                pool = new();
                _connections[key] = pool;
            }

            for (int i = pool.Count - 1; i >= 0; i--)
            {
                if (!pool[i].IsUsable)
                {
                    pool[i].BeginDrain();
                    pool.RemoveAt(i);
                }
            }

            if (!EnableMultipleHttp3Connections)
            {
                connection = pool.Count > 0 ? pool[0] : null;
            }
            else
            {
                Http3ClientConnection? connecting = null;
                foreach (Http3ClientConnection candidate in pool)
                {
                    if (!candidate.Connected.IsCompleted)
                    {
                        connecting ??= candidate;
                    }
                    else if (candidate.TryReserveStream())
                    {
                        connection = candidate;
                        reserved = true;
                        break;
                    }
                }

                // A connection still handshaking takes the request rather than a third one being opened.
                connection ??= connecting;
            }

            if (connection is null)
            {
                connection = new Http3ClientConnection(this, key, key.Host, key.Port);
                pool.Add(connection);
            }
        }

        return connection;
    }

    /// <summary>Waits for a connection still handshaking (the caller checked it is not connected yet).</summary>
    private async Task WaitConnectedAsync(Http3ClientConnection connection, bool reserved, CancellationToken cancellationToken)
    {
        try
        {
            await connection.Connected.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException)
        {
            Remove(connection);
            throw;
        }
        catch (OperationCanceledException)
        {
            if (reserved)
            {
                connection.ReleaseStreamReservation();
            }

            if (!cancellationToken.IsCancellationRequested)
            {
                Remove(connection); // ConnectTimeout elapsed: the next request tries a new connection
            }

            throw;
        }
    }

    internal void Remove(Http3ClientConnection connection)
    {
        lock (_lock)
        {
            if (_connections.TryGetValue(connection.Key, out List<Http3ClientConnection>? pool) && pool.Remove(connection) && pool.Count == 0)
            {
                _connections.Remove(connection.Key);
            }
        }

        connection.BeginDrain();
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            List<Http3ClientConnection> connections;
            lock (_lock)
            {
                if (_disposed)
                {
                    return;
                }

                _disposed = true;
                connections = _connections.Values.SelectMany(static pool => pool).ToList();
                _connections.Clear();
            }

            foreach (Http3ClientConnection connection in connections)
            {
                connection.Close();
            }

            FallbackHandler?.Dispose();
        }

        base.Dispose(disposing);
    }

    /// <summary>Calls another handler's protected SendAsync.</summary>
    private sealed class ForwardingInvoker(HttpMessageHandler handler) : HttpMessageInvoker(handler, disposeHandler: false);
}
