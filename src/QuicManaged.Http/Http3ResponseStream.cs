using System.Net.Quic.Managed;
using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http;

/// <summary>
/// The response body: DATA payloads as they arrive; a HEADERS frame after them is the trailer section (into
/// <see cref="HttpResponseMessage.TrailingHeaders"/>). A content-length that disagrees with the DATA is H3_MESSAGE_ERROR
/// (RFC 9114 §4.1.2). Disposing before the end stops the server's sending (H3_REQUEST_CANCELLED).
/// </summary>
internal sealed class Http3ResponseStream : Stream
{
    private readonly Http3ClientConnection _connection;
    private readonly Http3ClientConnection.RequestState _state;
    private readonly Http3FrameReader _reader;
    private readonly HttpResponseMessage _response;
    private readonly Task _sendBody;
    private readonly bool _isHead;
    private long? _expectedLength;
    private long _received;
    private bool _inData;
    private bool _trailersSeen;
    private bool _done;
    private int _disposed;

    public Http3ResponseStream(Http3ClientConnection connection, Http3ClientConnection.RequestState state, Http3FrameReader reader,
        HttpResponseMessage response, Task sendBody, bool isHead)
    {
        _connection = connection;
        _state = state;
        _reader = reader;
        _response = response;
        _sendBody = sendBody;
        _isHead = isHead;
    }

    public void SetExpectedLength(long? length) => _expectedLength = _isHead ? null : length;

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <summary>
    /// Copies the rest of the body with a buffer no larger than the body (HttpClient buffers responses through this):
    /// a small response does not rent the default 80 KiB copy buffer.
    /// </summary>
    public override async Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(destination);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bufferSize);
        if (_expectedLength is long expected)
        {
            bufferSize = (int)Math.Clamp(expected - _received, 1, bufferSize);
        }

        byte[] buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(bufferSize);
        try
        {
            int n;
            while ((n = await ReadAsync(buffer.AsMemory(0, bufferSize), cancellationToken).ConfigureAwait(false)) > 0)
            {
                await destination.WriteAsync(buffer.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (_done || buffer.IsEmpty)
        {
            return 0;
        }

        try
        {
            while (true)
            {
                if (_inData && _reader.PayloadRemaining > 0)
                {
                    int n = await _reader.ReadPayloadAsync(buffer, cancellationToken).ConfigureAwait(false);
                    _received += n;
                    if (_expectedLength is long limit && _received > limit)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.MessageError, "more DATA than content-length");
                    }

                    if (n > 0)
                    {
                        return n;
                    }
                }

                _inData = false;
                Http3FrameHeader? maybe = await _reader.ReadFrameHeaderAsync(cancellationToken).ConfigureAwait(false);
                if (maybe is not Http3FrameHeader header)
                {
                    if (_expectedLength is long expected && expected != _received)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.MessageError, $"content-length {expected} but {_received} bytes of DATA");
                    }

                    _done = true;
                    return 0;
                }

                switch (header.Type)
                {
                    case Http3FrameType.Data:
                        if (_trailersSeen)
                        {
                            throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "DATA after trailers");
                        }

                        _inData = true;
                        break;
                    case Http3FrameType.Headers:
                        if (_trailersSeen)
                        {
                            throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "HEADERS after trailers");
                        }

                        await ReadTrailersAsync(cancellationToken).ConfigureAwait(false);
                        break;
                    default:
                        Http3FrameType.RejectOnRequestStream(header.Type);
                        await _reader.SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
                        break;
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // As SocketsHttpHandler's HTTP/3 body: the stream is reset, and the read ends with an OperationCanceledException for the caller's token.
            _state.Abort((long)Http3ErrorCode.RequestCancelled);
            throw new OperationCanceledException(cancellationToken);
        }
        catch (Exception ex) when (ex is QuicException or Http3ProtocolException)
        {
            Exception translated = _connection.Translate(ex, _state);
            // Body failures surface as IOExceptions (HttpIOException), as SocketsHttpHandler's do.
            throw translated.InnerException is HttpProtocolException protocol ? protocol
                : new HttpIOException(HttpRequestError.ResponseEnded, translated.Message, translated);
        }
    }

    private async Task ReadTrailersAsync(CancellationToken cancellationToken)
    {
        byte[] payload = await _reader.ReadWholePayloadAsync(64 * 1024, Http3ErrorCode.ExcessiveLoad, cancellationToken).ConfigureAwait(false);
        List<HeaderField> fields = await Http3Message.DecodeFieldSectionAsync(payload, 64 * 1024, _connection.Qpack, _state.Stream.Id, cancellationToken).ConfigureAwait(false);
        Http3Message.Validate(fields, isRequest: false);
        foreach (HeaderField field in fields)
        {
            if (field.Name[0] == ':')
            {
                throw new Http3ProtocolException(Http3ErrorCode.MessageError, "pseudo-header in trailers");
            }

            _response.TrailingHeaders.TryAddWithoutValidation(field.Name, field.Value);
        }

        _trailersSeen = true;
    }

    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_state.BodySkipped)
        {
            // The request body was never sent: end the request side so the stream can close.
            try
            {
                _state.Stream.Abort(QuicAbortDirection.Write, (long)Http3ErrorCode.RequestCancelled);
            }
            catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException or QuicException)
            {
            }
        }

        if (_done)
        {
            // Read to the end: no read is in progress (the last one returned 0) and every later one returns 0 at once.
            _reader.ReturnBuffer();
        }
        else
        {
            // The caller stopped reading early: tell the server to stop sending (RFC 9114 §4.1.1), and its encoder that
            // any trailers on this stream will not be decoded (RFC 9204 §4.4.2).
            _state.Abort((long)Http3ErrorCode.RequestCancelled);
            _connection.Qpack.CancelStream(_state.Stream.Id);
        }

        try
        {
            await _sendBody.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is QuicException or IOException or OperationCanceledException)
        {
        }

        await _state.Stream.DisposeAsync().ConfigureAwait(false);
        _connection.OnRequestDone();
        await base.DisposeAsync().ConfigureAwait(false);
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && Volatile.Read(ref _disposed) == 0)
        {
            // Disposing the response does not block its thread until the stream is over (our FIN acknowledged, the
            // request body's task done): that finishes in the background, as with SocketsHttpHandler's HTTP/3.
            ValueTask pending = DisposeAsync();
            if (pending.IsCompleted)
            {
                pending.GetAwaiter().GetResult();
            }
            else
            {
                _ = FinishDisposeAsync(pending);
            }
        }

        base.Dispose(disposing);
    }

    private static async Task FinishDisposeAsync(ValueTask pending)
    {
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or IOException or OperationCanceledException)
        {
            // The connection went away meanwhile: nothing is left to release.
        }
    }
}
