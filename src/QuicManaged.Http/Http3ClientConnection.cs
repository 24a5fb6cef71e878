using System.Globalization;
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Authentication;
using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http;

/// <summary>
/// One HTTP/3 connection of <see cref="QuicManagedHttpHandler"/> to one authority: our control stream (SETTINGS with the
/// QPACK dynamic table capacity and blocked-stream limit we decode with), the QPACK encoder and decoder streams (our
/// encoder never uses the dynamic table; our decoder applies the server's encoder stream and acknowledges on the decoder
/// stream, RFC 9204 §4.3, §4.4), the server's control stream (SETTINGS, GOAWAY), and the requests, one bidirectional
/// stream each (RFC 9114 §4, §6).
/// </summary>
internal sealed class Http3ClientConnection
{
    private readonly QuicManagedHttpHandler _handler;
    private readonly string _host;
    private readonly int _port;
    // Requests whose response headers have not arrived (GOAWAY rejects those at or above its id): each in the slot of its
    // stream index, taken and freed with a compare-exchange (no lock, no allocation); a request whose slot is taken
    // (more than AwaitingSlots requests in flight) goes to the locked overflow dictionary.
    private readonly RequestState?[] _awaitingSlots = new RequestState?[AwaitingSlots];
    private readonly Dictionary<long, RequestState> _awaitingOverflow = new();
    private string? _authority;
    private List<HeaderField>? _spareFields;
    private readonly List<QuicStream> _localStreams = new();
    private QuicConnection? _quic;
    private readonly Http3PeerStreams _peerStreams;
    private readonly QpackDecoderSession _qpack;
    private QuicStream? _decoderStream;
    private int _decoderWriting;
    private int _active;
    // Bidirectional streams the server allows that no request has taken yet (MAX_STREAMS minus opened), from the
    // transport's StreamCapacityCallback; only consulted when the handler may open more connections.
    private long _availableStreams;
    private volatile bool _draining;
    private volatile Exception? _failure;
    private int _closed;

    private const int AwaitingSlots = 256;

    private void AddAwaiting(RequestState state)
    {
        long id = state.Stream.Id;
        if (Interlocked.CompareExchange(ref _awaitingSlots[(int)(id >> 2) & (AwaitingSlots - 1)], state, null) is not null)
        {
            lock (_awaitingOverflow)
            {
                _awaitingOverflow[id] = state;
            }
        }
    }

    private void RemoveAwaiting(RequestState state)
    {
        long id = state.Stream.Id;
        if (Interlocked.CompareExchange(ref _awaitingSlots[(int)(id >> 2) & (AwaitingSlots - 1)], null, state) != state)
        {
            lock (_awaitingOverflow)
            {
                _awaitingOverflow.Remove(id);
            }
        }
    }

    public Http3ClientConnection(QuicManagedHttpHandler handler, (string Host, int Port) key, string host, int port)
    {
        _handler = handler;
        Key = key;
        _host = host;
        _port = port;
        _qpack = new QpackDecoderSession(handler.QpackMaxTableCapacity, handler.QpackBlockedStreams);
        _qpack.DecoderInstructionsQueued += OnDecoderInstructionsQueued;
        _peerStreams = new Http3PeerStreams(isServer: false, static _ => { }, OnGoaway, _qpack);
        Connected = ConnectAsync();
    }

    /// <summary>The pool key: the URI's IDN host and port.</summary>
    public (string Host, int Port) Key { get; }

    /// <summary>The QPACK decoder state of this connection (tests read its insert and byte counts).</summary>
    internal QpackDecoderSession Qpack => _qpack;

    /// <summary>Completes when the handshake and our stream setup are done; faults with an <see cref="HttpRequestException"/>.</summary>
    public Task Connected { get; }

    public bool IsUsable => !_draining && _failure is null && !Connected.IsFaulted && !Connected.IsCanceled;

    /// <summary>
    /// Takes one of the request streams the server currently allows (RFC 9000 §4.6); false when all are in use, in which
    /// case opening one would wait for MAX_STREAMS. A reservation not used by <see cref="SendAsync"/> is given back.
    /// </summary>
    public bool TryReserveStream()
    {
        long available = Volatile.Read(ref _availableStreams);
        while (available > 0)
        {
            long seen = Interlocked.CompareExchange(ref _availableStreams, available - 1, available);
            if (seen == available)
            {
                return true;
            }

            available = seen;
        }

        return false;
    }

    /// <summary>Gives back a reservation whose stream was never opened.</summary>
    public void ReleaseStreamReservation() => Interlocked.Increment(ref _availableStreams);

    private async Task ConnectAsync()
    {
        // ConnectTimeout covers name resolution and the handshakes, as SocketsHttpHandler's does; each handshake also
        // has the transport's own limit (HandshakeTimeout, 10 s as msquic's).
        TimeSpan connectTimeout = _handler.ConnectTimeout;
        using CancellationTokenSource? timeout = connectTimeout == Timeout.InfiniteTimeSpan ? null : new CancellationTokenSource(connectTimeout);
        CancellationToken token = timeout?.Token ?? CancellationToken.None;
        try
        {
            _quic = await HandshakeAsync(token).ConfigureAwait(false);
        }
        catch (OperationCanceledException ex) when (timeout?.IsCancellationRequested == true)
        {
            // As SocketsHttpHandler reports its ConnectTimeout: a cancellation whose inner exception is a TimeoutException.
            string message = $"Connecting to {_host}:{_port} timed out after {FormatTimeout(connectTimeout)} (ConnectTimeout).";
            throw new TaskCanceledException(message, new TimeoutException(message, ex), token);
        }

        try
        {
            // RFC 9114 §6.2.1: the control stream starts with SETTINGS. RFC 9204 §4.2: both QPACK streams; our encoder
            // never writes to its stream, our decoder acknowledges on its own.
            var settings = new Http3Settings
            {
                MaxFieldSectionSize = _handler.MaxResponseHeadersLength,
                QpackMaxTableCapacity = _qpack.MaxTableCapacity,
                QpackBlockedStreams = _qpack.MaxBlockedStreams,
            };
            byte[] settingsFrame = settings.EncodeFrame();
            byte[] control = new byte[1 + settingsFrame.Length];
            control[0] = (byte)Http3StreamType.Control;
            settingsFrame.CopyTo(control, 1);
            await OpenLocalStreamAsync(control).ConfigureAwait(false);
            await OpenLocalStreamAsync([(byte)Http3StreamType.QpackEncoder]).ConfigureAwait(false);
            _decoderStream = await OpenLocalStreamAsync([(byte)Http3StreamType.QpackDecoder]).ConfigureAwait(false);
        }
        catch (QuicException ex)
        {
            Fail(ex, Http3ErrorCode.InternalError);
            throw new HttpRequestException(HttpRequestError.ConnectionError, "The HTTP/3 connection closed during setup: " + ex.Message, ex);
        }

        _ = AcceptLoopAsync(_quic);
    }

    private async Task<QuicConnection> HandshakeAsync(CancellationToken cancellationToken)
    {
        IPAddress[] addresses;
        try
        {
            addresses = IPAddress.TryParse(_host, out IPAddress? literal) ? [literal] : await Dns.GetHostAddressesAsync(_host, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is System.Net.Sockets.SocketException or ArgumentException)
        {
            throw new HttpRequestException(HttpRequestError.NameResolutionError, $"Could not resolve {_host}: {ex.Message}", ex);
        }

        Exception? last = null;
        foreach (IPAddress address in addresses)
        {
            SslClientAuthenticationOptions ssl = _handler.SslOptions;
            var options = new QuicClientConnectionOptions
            {
                RemoteEndPoint = new IPEndPoint(address, _port),
                ClientAuthenticationOptions = new SslClientAuthenticationOptions
                {
                    ApplicationProtocols = [SslApplicationProtocol.Http3],
                    TargetHost = _host,
                    RemoteCertificateValidationCallback = ssl.RemoteCertificateValidationCallback,
                    LocalCertificateSelectionCallback = ssl.LocalCertificateSelectionCallback,
                    ClientCertificates = ssl.ClientCertificates,
                    CertificateRevocationCheckMode = ssl.CertificateRevocationCheckMode,
                    CertificateChainPolicy = ssl.CertificateChainPolicy,
                },
                DefaultStreamErrorCode = (long)Http3ErrorCode.RequestCancelled,
                DefaultCloseErrorCode = (long)Http3ErrorCode.NoError,
                MaxInboundBidirectionalStreams = 0,
                MaxInboundUnidirectionalStreams = 16,
                IdleTimeout = _handler.IdleTimeout,
                HandshakeTimeout = QuicManagedHttpHandler.HandshakeTimeout,
                StreamCapacityCallback = (_, args) => Interlocked.Add(ref _availableStreams, args.BidirectionalIncrement),
            };
            try
            {
                return await QuicConnection.ConnectAsync(options, QuicProvider.Managed, cancellationToken).ConfigureAwait(false);
            }
            catch (AuthenticationException ex)
            {
                throw new HttpRequestException(HttpRequestError.SecureConnectionError, $"The TLS handshake with {_host}:{_port} failed: {ex.Message}", ex);
            }
            catch (QuicException ex) when (ex.QuicError == QuicError.ConnectionTimeout)
            {
                last = new HttpRequestException(HttpRequestError.ConnectionError,
                    $"The QUIC handshake with {address}:{_port} timed out after {FormatTimeout(QuicManagedHttpHandler.HandshakeTimeout)} (no answer from the server).", ex);
            }
            catch (Exception ex) when (ex is QuicException or System.Net.Sockets.SocketException)
            {
                last = new HttpRequestException(HttpRequestError.ConnectionError, $"Could not open an HTTP/3 connection to {_host}:{_port}: {ex.Message}", ex);
            }
        }

        throw last ?? new HttpRequestException(HttpRequestError.NameResolutionError, $"{_host} resolved to no address.");
    }

    private static string FormatTimeout(TimeSpan timeout)
        => timeout.TotalSeconds >= 1 && timeout.Milliseconds == 0
            ? timeout.TotalSeconds.ToString("0", CultureInfo.InvariantCulture) + " s"
            : timeout.TotalMilliseconds.ToString("0", CultureInfo.InvariantCulture) + " ms";

    private async Task<QuicStream> OpenLocalStreamAsync(byte[] first)
    {
        QuicStream stream = await _quic!.OpenOutboundStreamAsync(QuicStreamType.Unidirectional).ConfigureAwait(false);
        lock (_localStreams)
        {
            _localStreams.Add(stream);
        }

        await stream.WriteAsync(first).ConfigureAwait(false);
        return stream;
    }

    /// <summary>Writes queued decoder-stream instructions in order, one writer at a time.</summary>
    private void OnDecoderInstructionsQueued()
    {
        if (Interlocked.Exchange(ref _decoderWriting, 1) == 0)
        {
            _ = WriteDecoderInstructionsAsync();
        }
    }

    private async Task WriteDecoderInstructionsAsync()
    {
        try
        {
            while (true)
            {
                byte[]? instructions = _decoderStream is null ? null : _qpack.TakeDecoderInstructions();
                if (instructions is null)
                {
                    Volatile.Write(ref _decoderWriting, 0);
                    // Something queued after the take but before the flag was cleared is picked up here.
                    if (_decoderStream is null || !_qpack.HasDecoderInstructions || Interlocked.Exchange(ref _decoderWriting, 1) != 0)
                    {
                        return;
                    }

                    continue;
                }

                await _decoderStream!.WriteAsync(instructions).ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException or InvalidOperationException)
        {
            // The connection is going away.
        }
    }

    private async Task AcceptLoopAsync(QuicConnection quic)
    {
        try
        {
            while (true)
            {
                QuicStream stream = await quic.AcceptInboundStreamAsync().ConfigureAwait(false);
                if (stream.Type == QuicStreamType.Bidirectional)
                {
                    // RFC 9114 §6.1: servers do not open bidirectional streams.
                    throw new Http3ProtocolException(Http3ErrorCode.StreamCreationError, "the server opened a bidirectional stream");
                }

                _ = HandleUnidirectionalAsync(stream);
            }
        }
        catch (Http3ProtocolException ex)
        {
            Fail(ex, ex.ErrorCode);
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException)
        {
            // The connection closed (by the server, idle timeout, or us).
            Fail(ex, null);
        }
    }

    private async Task HandleUnidirectionalAsync(QuicStream stream)
    {
        try
        {
            var reader = new Http3FrameReader(stream, 4096);
            if (await reader.ReadStreamTypeAsync(CancellationToken.None).ConfigureAwait(false) is long type
                && !await _peerStreams.ReadAsync(reader, type, CancellationToken.None).ConfigureAwait(false))
            {
                // RFC 9114 §6.2: unknown (and grease) stream types are ignored.
                stream.Abort(QuicAbortDirection.Read, (long)Http3ErrorCode.StreamCreationError);
            }
        }
        catch (Http3ProtocolException ex)
        {
            Fail(ex, ex.ErrorCode);
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException or IOException)
        {
            // The connection is going away.
        }
        finally
        {
            await stream.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>RFC 9114 §5.2: requests at or above the id were not processed; they go again on a new connection.</summary>
    private void OnGoaway(long id)
    {
        _handler.Remove(this);
        List<RequestState> rejected = new();
        foreach (RequestState? state in _awaitingSlots)
        {
            if (state is not null && state.Stream.Id >= id)
            {
                rejected.Add(state);
            }
        }

        lock (_awaitingOverflow)
        {
            foreach ((long streamId, RequestState state) in _awaitingOverflow)
            {
                if (streamId >= id)
                {
                    rejected.Add(state);
                }
            }
        }

        foreach (RequestState state in rejected)
        {
            state.Rejected = true;
            state.Abort((long)Http3ErrorCode.RequestCancelled);
        }
    }

    /// <summary>A connection error (<paramref name="code"/>) closes the connection with it; null: it is already gone.</summary>
    private void Fail(Exception reason, Http3ErrorCode? code)
    {
        _failure ??= reason;
        _qpack.Fail(reason);
        _handler.Remove(this);
        if (code is Http3ErrorCode c && Interlocked.Exchange(ref _closed, 1) == 0 && _quic is not null)
        {
            _ = CloseQuietlyAsync(_quic, (long)c);
        }
    }

    private static async Task CloseQuietlyAsync(QuicConnection quic, long code)
    {
        try
        {
            await quic.CloseAsync(code).ConfigureAwait(false);
            await quic.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException)
        {
        }
    }

    /// <summary>No new requests; the connection closes (H3_NO_ERROR) when the last one ends.</summary>
    public void BeginDrain()
    {
        _draining = true;
        // Full fence: either SendAsync sees the flag after counting its request in, or this sees the request counted.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _active) == 0)
        {
            Close();
        }
    }

    /// <summary>Closes now with H3_NO_ERROR (handler disposal).</summary>
    public void Close()
    {
        _draining = true;
        if (Connected.IsCompletedSuccessfully && _quic is not null && Interlocked.Exchange(ref _closed, 1) == 0)
        {
            _ = CloseQuietlyAsync(_quic, (long)Http3ErrorCode.NoError);
        }
        else if (!Connected.IsCompleted)
        {
            _ = Connected.ContinueWith(static (t, s) => ((Http3ClientConnection)s!).Close(), this, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously | TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
        }
    }

    internal void OnRequestDone()
    {
        if (Interlocked.Decrement(ref _active) == 0 && _draining)
        {
            Close();
        }
    }

    /// <summary>
    /// Sends <paramref name="request"/> on a new request stream and reads the response's headers; the body follows
    /// through the response content. Awaited once by the handler: its state machine is pooled.
    /// </summary>
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<HttpResponseMessage> SendAsync(HttpRequestMessage request, bool streamReserved, CancellationToken cancellationToken)
    {
        QuicConnection quic = _quic!;
        Interlocked.Increment(ref _active);
        QuicStream stream;
        try
        {
            if (!streamReserved)
            {
                // Opening consumes one stream of the limit whether or not it had been reserved.
                Interlocked.Decrement(ref _availableStreams);
            }

            if (_failure is not null)
            {
                throw new Http3RetryException("The connection closed before the request was sent.", _failure);
            }

            if (_draining)
            {
                // GOAWAY (or disposal) came between choosing this connection and counting the request in: the drain
                // may already be closing it (it saw no request active), so the request goes to another connection.
                throw new Http3RetryException("The connection began to close before the request was sent.");
            }

            stream = await quic.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);
        }
        catch (QuicException ex)
        {
            ReleaseStreamReservation();
            OnRequestDone();
            throw new Http3RetryException("The connection closed before the request was sent: " + ex.Message, ex);
        }
        catch
        {
            ReleaseStreamReservation();
            OnRequestDone();
            throw;
        }

        var state = new RequestState(stream);
        if (request.Content is not null && request.Headers.ExpectContinue == true)
        {
            // Expect: 100-continue (RFC 9110 §10.1.1): the body waits for 100, or for a final status below 300, or for
            // the handler's Expect100ContinueTimeout, as SocketsHttpHandler does.
            state.Continue = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        long goaway = _peerStreams.GoawayId;
        if (goaway >= 0 && stream.Id >= goaway)
        {
            stream.Abort(QuicAbortDirection.Both, (long)Http3ErrorCode.RequestCancelled);
            await stream.DisposeAsync().ConfigureAwait(false);
            OnRequestDone();
            throw new Http3RetryException("The server sent GOAWAY before this request.");
        }

        AddAwaiting(state);

        bool handedOver = false;
        CancellationTokenRegistration cancellation = default;
        // Small: it holds frame headers and the response's HEADERS; DATA payloads go straight to the reader's buffer.
        // Pooled: given back when the response is read to its end, or here when the request fails.
        var reader = new Http3FrameReader(stream, 2048, pooled: true);
        try
        {
            cancellation = cancellationToken.UnsafeRegister(static s => ((RequestState)s!).Abort((long)Http3ErrorCode.RequestCancelled), state);
            byte[] headers = Http3RequestHeaders.RentHeadersFrame(request, AuthorityFor(request), out int headersOffset, out int headersLength);
            Task sendBody;
            try
            {
                if (request.Content is null)
                {
                    await stream.WriteAsync(headers.AsMemory(headersOffset, headersLength), completeWrites: true, cancellationToken).ConfigureAwait(false);
                    sendBody = Task.CompletedTask;
                }
                else
                {
                    await stream.WriteAsync(headers.AsMemory(headersOffset, headersLength), cancellationToken).ConfigureAwait(false);
                    sendBody = SendBodyAsync(state, request.Content, _handler.Expect100ContinueTimeout, cancellationToken);
                }
            }
            finally
            {
                // A completed write no longer refers to the buffer (the stream copied or sent it).
                System.Buffers.ArrayPool<byte>.Shared.Return(headers);
            }

            // The response's headers, read here rather than in a method of their own: one state machine per request fewer.
            HttpResponseMessage? response = null;
            while (response is null)
            {
                Http3FrameHeader header = await reader.ReadFrameHeaderAsync(cancellationToken).ConfigureAwait(false)
                    ?? throw new Http3ProtocolException(Http3ErrorCode.RequestIncomplete, "the response ended before its headers");
                switch (header.Type)
                {
                    case Http3FrameType.Headers:
                        int max = _handler.MaxResponseHeadersLength;
                        // Usually the whole section arrived with the frame header: it is decoded where it lies.
                        ReadOnlyMemory<byte> payload = reader.TryTakeBufferedPayload(max, out ReadOnlyMemory<byte> buffered) ? buffered
                            : await reader.ReadWholePayloadAsync(max, Http3ErrorCode.ExcessiveLoad, cancellationToken).ConfigureAwait(false);
                        // One decoded-field list per connection is reused by the request that finds it free.
                        List<HeaderField> fields = Interlocked.Exchange(ref _spareFields, null) ?? new List<HeaderField>(8);
                        try
                        {
                            await _qpack.DecodeAsync(payload, stream.Id, max, cancellationToken, fields).ConfigureAwait(false);
                            response = ToResponse(request, state, fields); // null: informational, the final one follows
                        }
                        finally
                        {
                            fields.Clear();
                            Volatile.Write(ref _spareFields, fields);
                        }

                        break;
                    case Http3FrameType.Data:
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "DATA before the response headers");
                    default:
                        Http3FrameType.RejectOnRequestStream(header.Type);
                        await reader.SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
                        break;
                }
            }

            RemoveAwaiting(state);

            await cancellation.DisposeAsync().ConfigureAwait(false);
            var body = new Http3ResponseStream(this, state, reader, response, sendBody, request.Method == HttpMethod.Head);
            var content = (Http3ResponseContent)response.Content;
            content.SetBody(body);
            body.SetExpectedLength(content.Headers.ContentLength);
            handedOver = true;
            return response;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            state.Abort((long)Http3ErrorCode.RequestCancelled);
            throw;
        }
        catch (Exception ex) when (ex is QuicException or Http3ProtocolException or IOException)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                throw new TaskCanceledException("The request was canceled.", ex, cancellationToken);
            }

            throw Translate(ex, state);
        }
        finally
        {
            if (!handedOver)
            {
                RemoveAwaiting(state);

                await cancellation.DisposeAsync().ConfigureAwait(false);
                state.Continue?.TrySetResult(false);
                // Every read of the reader was awaited: none is in progress, none follows.
                reader.ReturnBuffer();
                await stream.DisposeAsync().ConfigureAwait(false);
                OnRequestDone();
            }
        }
    }

    /// <summary>
    /// The request's :authority: the connection's own (made once) when the request has no Host header and targets the
    /// connection's host and port, which is every request but those with a Host header; null: computed from the request.
    /// </summary>
    private string? AuthorityFor(HttpRequestMessage request)
    {
        Uri uri = request.RequestUri!;
        if (uri.Port != _port || request.Headers.Host is not null || !string.Equals(uri.IdnHost, _host, StringComparison.Ordinal))
        {
            return null;
        }

        return _authority ??= Http3RequestHeaders.Authority(_host, _port, uri.IsDefaultPort, uri.HostNameType == UriHostNameType.IPv6);
    }

    /// <summary>Maps a transport or protocol failure to what HttpClient users expect; connection errors close the connection.</summary>
    internal Exception Translate(Exception ex, RequestState state)
    {
        if (state.BodyFailure is Exception bodyFailure)
        {
            return new HttpRequestException(HttpRequestError.Unknown, "Sending the request content failed: " + bodyFailure.Message, bodyFailure);
        }

        switch (ex)
        {
            case Http3ProtocolException protocol:
                if (Http3Message.IsConnectionError(protocol.ErrorCode))
                {
                    Fail(protocol, protocol.ErrorCode);
                }
                else
                {
                    state.Abort((long)protocol.ErrorCode);
                }

                return new HttpRequestException(HttpRequestError.HttpProtocolError, protocol.Message,
                    new HttpProtocolException((long)protocol.ErrorCode, protocol.Message, protocol));
            case QuicException quic when quic.QuicError == QuicError.StreamAborted && quic.ApplicationErrorCode is long code:
                if (code == (long)Http3ErrorCode.RequestRejected || state.Rejected)
                {
                    return new Http3RetryException($"The server rejected the request (0x{code:x}).", quic);
                }

                return new HttpRequestException(HttpRequestError.HttpProtocolError, $"The HTTP/3 server reset the stream with 0x{code:x}.",
                    new HttpProtocolException(code, $"The HTTP/3 server reset the stream with 0x{code:x}.", quic));
            case QuicException quic when state.Rejected:
                return new Http3RetryException("The server sent GOAWAY before processing this request.", quic);
            case QuicException quic when quic.QuicError == QuicError.ConnectionAborted && quic.ApplicationErrorCode is long code:
                return new HttpRequestException(HttpRequestError.HttpProtocolError, $"The HTTP/3 server closed the connection with 0x{code:x}.",
                    new HttpProtocolException(code, $"The HTTP/3 server closed the connection with 0x{code:x}.", quic));
            default:
                return new HttpRequestException(HttpRequestError.ConnectionError, "The HTTP/3 connection failed: " + ex.Message, ex);
        }
    }

    private static async Task SendBodyAsync(RequestState state, HttpContent content, TimeSpan expect100ContinueTimeout, CancellationToken cancellationToken)
    {
        try
        {
            if (state.Continue is TaskCompletionSource<bool> proceed)
            {
                bool send;
                try
                {
                    send = await proceed.Task.WaitAsync(expect100ContinueTimeout, cancellationToken).ConfigureAwait(false);
                }
                catch (TimeoutException)
                {
                    send = true; // no interim response in time: send anyway (RFC 9110 §10.1.1)
                }

                if (!send)
                {
                    // A final status of 300 or more came first: the body is not sent; the request side is reset
                    // when the response is disposed (H3_REQUEST_CANCELLED), as nothing more will be written.
                    state.BodySkipped = true;
                    return;
                }
            }

            using var body = new Http3RequestBodyStream(state.Stream);
            await content.CopyToAsync(body, cancellationToken).ConfigureAwait(false);
            state.Stream.CompleteWrites();
        }
        catch (QuicException)
        {
            // The server stopped reading (STOP_SENDING, e.g. it answered early) or the connection went away: the
            // response side reports what happened.
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            // The content itself failed: the request cannot complete; reset both directions.
            state.BodyFailure = ex;
            state.Abort((long)Http3ErrorCode.RequestCancelled);
        }
    }

    /// <summary>The response of a decoded field section; null for an informational (1xx) one, which is skipped.</summary>
    private static HttpResponseMessage? ToResponse(HttpRequestMessage request, RequestState state, List<HeaderField> fields)
    {
        Http3Message.Validate(fields, isRequest: false);
        string? statusText = Http3Message.Find(fields, ":status");
        if (statusText is null || statusText.Length != 3
            || !int.TryParse(statusText, NumberStyles.None, CultureInfo.InvariantCulture, out int status) || status < 100)
        {
            throw new Http3ProtocolException(Http3ErrorCode.MessageError, "missing or invalid :status");
        }

        if (status < 200)
        {
            // Informational responses precede the final one (RFC 9114 §4.1) and are skipped; 100 releases
            // a body held back by Expect: 100-continue.
            if (status == 100)
            {
                state.Continue?.TrySetResult(true);
            }

            return null;
        }

        state.Continue?.TrySetResult(status < 300);
        var response = new HttpResponseMessage((HttpStatusCode)status)
        {
            Version = HttpVersion.Version30,
            RequestMessage = request,
            Content = new Http3ResponseContent(),
        };
        foreach (HeaderField field in fields)
        {
            if (field.Name[0] != ':' && !response.Headers.TryAddWithoutValidation(field.Name, field.Value))
            {
                response.Content.Headers.TryAddWithoutValidation(field.Name, field.Value);
            }
        }

        return response;
    }

    /// <summary>Per-request state shared by the send and receive sides.</summary>
    internal sealed class RequestState(QuicStream stream)
    {
        public QuicStream Stream { get; } = stream;

        public volatile bool Rejected;

        public Exception? BodyFailure { get; set; }

        /// <summary>Set for Expect: 100-continue: true sends the body, false skips it.</summary>
        public TaskCompletionSource<bool>? Continue { get; set; }

        /// <summary>The body was not sent (a final status of 300 or more answered Expect: 100-continue).</summary>
        public volatile bool BodySkipped;

        public void Abort(long code)
        {
            try
            {
                Stream.Abort(QuicAbortDirection.Both, code);
            }
            catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException or QuicException)
            {
            }
        }
    }
}
