using System.Runtime.CompilerServices;

namespace QuicManaged.Http.Framing;

/// <summary>
/// Reads HTTP/3 frames from one stream (RFC 9114 §7.1). Frame payloads are either streamed in chunks (DATA)
/// or read whole up to a caller-given cap; nothing is sized by a length read off the wire before that cap is
/// checked. Violations surface as <see cref="Http3ProtocolException"/> only.
/// </summary>
internal sealed class Http3FrameReader
{
    private readonly Stream _stream;
    private byte[] _buffer;
    private readonly bool _pooled;
    private int _start;
    private int _end;
    private bool _endOfStream;
    private long _payloadRemaining;

    /// <param name="stream">The stream read from.</param>
    /// <param name="bufferSize">The buffer for frame headers and whole payloads (at least a frame header).</param>
    /// <param name="pooled">
    /// The buffer comes from <see cref="System.Buffers.ArrayPool{T}.Shared"/>; the owner gives it back with
    /// <see cref="ReturnBuffer"/> once no read is in progress or will follow (else the garbage collector takes it).
    /// </param>
    public Http3FrameReader(Stream stream, int bufferSize = 16 * 1024, bool pooled = false)
    {
        _stream = stream;
        bufferSize = Math.Max(bufferSize, Http3FrameCodec.MaxFrameHeaderLength);
        _pooled = pooled;
        _buffer = pooled ? System.Buffers.ArrayPool<byte>.Shared.Rent(bufferSize) : new byte[bufferSize];
    }

    /// <summary>
    /// Gives a pooled buffer back; the reader is unusable afterwards (a read throws rather than touching the buffer).
    /// Call only when no read is in progress and none will start.
    /// </summary>
    public void ReturnBuffer()
    {
        byte[] buffer = _buffer;
        if (!_pooled || buffer.Length == 0)
        {
            return;
        }

        _buffer = [];
        _start = _end = 0;
        _payloadRemaining = 0;
        System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
    }

    /// <summary>
    /// The whole current payload when it is already buffered and at most <paramref name="maxLength"/> bytes (consumed);
    /// false when it is not (nothing consumed): then <see cref="ReadWholePayloadAsync"/> reads it.
    /// The memory stays valid until the next read on this reader.
    /// </summary>
    public bool TryTakeBufferedPayload(int maxLength, out ReadOnlyMemory<byte> payload)
    {
        if (_payloadRemaining > maxLength || _payloadRemaining > _end - _start)
        {
            payload = default;
            return false;
        }

        int length = (int)_payloadRemaining;
        payload = _buffer.AsMemory(_start, length);
        _start += length;
        _payloadRemaining = 0;
        return true;
    }

    /// <summary>Payload bytes of the current frame not yet consumed.</summary>
    public long PayloadRemaining => _payloadRemaining;

    /// <summary>Reads a varint at the start of a unidirectional stream (RFC 9114 §6.2). Null on a clean end of stream.</summary>
    public async ValueTask<long?> ReadStreamTypeAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            if (VariableLengthInteger.TryRead(_buffer.AsSpan(_start, _end - _start), out long value, out int consumed))
            {
                _start += consumed;
                return value;
            }

            if (_endOfStream || !await FillAsync(cancellationToken).ConfigureAwait(false))
            {
                return null;
            }
        }
    }

    /// <summary>
    /// Reads the next frame header, first discarding whatever is left of the current payload.
    /// Returns null at a clean end of stream (between frames); a stream ending inside a frame is H3_FRAME_ERROR.
    /// A header already buffered (the usual case after the first read of a response) is returned without an await.
    /// </summary>
    public ValueTask<Http3FrameHeader?> ReadFrameHeaderAsync(CancellationToken cancellationToken)
    {
        if (_payloadRemaining == 0
            && Http3FrameCodec.TryReadFrameHeader(_buffer.AsSpan(_start, _end - _start), out Http3FrameHeader header, out int consumed))
        {
            _start += consumed;
            _payloadRemaining = header.Length;
            return new ValueTask<Http3FrameHeader?>(header);
        }

        return ReadFrameHeaderSlowAsync(cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<Http3FrameHeader?> ReadFrameHeaderSlowAsync(CancellationToken cancellationToken)
    {
        if (_payloadRemaining > 0)
        {
            await SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
        }

        while (true)
        {
            if (Http3FrameCodec.TryReadFrameHeader(_buffer.AsSpan(_start, _end - _start), out Http3FrameHeader header, out int consumed))
            {
                _start += consumed;
                _payloadRemaining = header.Length;
                return header;
            }

            // The fill is inline (not FillAsync): a read that waits costs one state machine, not two.
            bool filled = false;
            if (PrepareFill() is { } free)
            {
                int n = await _stream.ReadAsync(free, cancellationToken).ConfigureAwait(false);
                filled = CompleteFill(n);
            }

            if (!filled)
            {
                if (_end == _start)
                {
                    return null;
                }

                throw new Http3ProtocolException(Http3ErrorCode.FrameError, "stream ended inside a frame header");
            }
        }
    }

    /// <summary>Copies up to <paramref name="destination"/>.Length bytes of the current payload; 0 when it is consumed.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<int> ReadPayloadAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (_payloadRemaining == 0 || destination.IsEmpty)
        {
            return 0;
        }

        if (_end == _start && !_endOfStream && destination.Length >= _buffer.Length)
        {
            // Nothing buffered and the caller's buffer is the larger: the payload goes straight there (one copy fewer),
            // never past the payload's end (the next frame header stays in the stream).
            int direct = await _stream.ReadAsync(destination[..(int)Math.Min(destination.Length, _payloadRemaining)], cancellationToken).ConfigureAwait(false);
            if (direct == 0)
            {
                _endOfStream = true;
                throw new Http3ProtocolException(Http3ErrorCode.FrameError, "stream ended inside a frame payload");
            }

            _payloadRemaining -= direct;
            return direct;
        }

        if (_end == _start && !await FillAsync(cancellationToken).ConfigureAwait(false))
        {
            // RFC 9114 §7.1: a frame truncated by the end of the stream is H3_FRAME_ERROR.
            throw new Http3ProtocolException(Http3ErrorCode.FrameError, "stream ended inside a frame payload");
        }

        int n = (int)Math.Min(Math.Min(destination.Length, _end - _start), _payloadRemaining);
        _buffer.AsSpan(_start, n).CopyTo(destination.Span);
        _start += n;
        _payloadRemaining -= n;
        return n;
    }

    /// <summary>Reads the whole current payload, refusing (with <paramref name="errorIfTooLarge"/>) any above the cap.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<byte[]> ReadWholePayloadAsync(int maxLength, Http3ErrorCode errorIfTooLarge, CancellationToken cancellationToken)
    {
        if (_payloadRemaining > maxLength)
        {
            throw new Http3ProtocolException(errorIfTooLarge, $"frame payload of {_payloadRemaining} bytes exceeds the limit of {maxLength}");
        }

        byte[] payload = new byte[(int)_payloadRemaining];
        int offset = 0;
        while (offset < payload.Length)
        {
            offset += await ReadPayloadAsync(payload.AsMemory(offset), cancellationToken).ConfigureAwait(false);
        }

        return payload;
    }

    /// <summary>Discards the rest of the current payload (unknown and reserved frame types, RFC 9114 §9).</summary>
    public async ValueTask SkipPayloadAsync(CancellationToken cancellationToken)
    {
        while (_payloadRemaining > 0)
        {
            if (_end == _start && !await FillAsync(cancellationToken).ConfigureAwait(false))
            {
                throw new Http3ProtocolException(Http3ErrorCode.FrameError, "stream ended inside a frame payload");
            }

            int n = (int)Math.Min(_end - _start, _payloadRemaining);
            _start += n;
            _payloadRemaining -= n;
        }
    }

    /// <summary>Reads raw bytes (QPACK encoder/decoder streams have no frames). 0 at end of stream.</summary>
    public async ValueTask<int> ReadRawAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (_end == _start && !await FillAsync(cancellationToken).ConfigureAwait(false))
        {
            return 0;
        }

        int n = Math.Min(destination.Length, _end - _start);
        _buffer.AsSpan(_start, n).CopyTo(destination.Span);
        _start += n;
        return n;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> FillAsync(CancellationToken cancellationToken)
        => PrepareFill() is { } free && CompleteFill(await _stream.ReadAsync(free, cancellationToken).ConfigureAwait(false));

    /// <summary>The free part of the buffer to read into (buffered bytes moved to its start); null at the end of the stream.</summary>
    private Memory<byte>? PrepareFill()
    {
        ObjectDisposedException.ThrowIf(_buffer.Length == 0, this); // the pooled buffer was given back
        if (_endOfStream)
        {
            return null;
        }

        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        return _buffer.AsMemory(_end);
    }

    /// <summary>Takes the <paramref name="read"/> bytes a fill read; false (and the end noted) for 0.</summary>
    private bool CompleteFill(int read)
    {
        if (read == 0)
        {
            _endOfStream = true;
            return false;
        }

        _end += read;
        return true;
    }
}
