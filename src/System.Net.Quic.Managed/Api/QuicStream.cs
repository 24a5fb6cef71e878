using System.Buffers;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>A QUIC stream: a <see cref="Stream"/> that reads and writes like SslStream. Mirrors System.Net.Quic.QuicStream.</summary>
public sealed class QuicStream : Stream
{
    private readonly QuicStreamImpl _impl;
    private int _readTimeout = Timeout.Infinite;
    private int _writeTimeout = Timeout.Infinite;
    private volatile bool _disposed;

    internal QuicStream(QuicStreamImpl impl) => _impl = impl;

    /// <summary>The stream ID (RFC 9000 §2.1).</summary>
    public long Id => _impl.Id;

    /// <summary>Unidirectional or bidirectional.</summary>
    public QuicStreamType Type => _impl.Type;

    /// <summary>Completes when the read side is closed: all data read, or aborted (then faulted with a <see cref="QuicException"/>).</summary>
    public Task ReadsClosed => _impl.ReadsClosed;

    /// <summary>Completes when the write side is closed: all data acknowledged, or aborted (then faulted).</summary>
    public Task WritesClosed => _impl.WritesClosed;

    /// <summary>Aborts the read side (STOP_SENDING), the write side (RESET_STREAM) or both with an application error code.</summary>
    /// <param name="abortDirection">Which side(s) to abort.</param>
    /// <param name="errorCode">The application error code, 0 to 2^62-1.</param>
    public void Abort(QuicAbortDirection abortDirection, long errorCode) => _impl.Abort(abortDirection, errorCode);

    /// <summary>Gracefully ends the write side: the peer reads to the end (FIN).</summary>
    public void CompleteWrites() => _impl.CompleteWrites();

    /// <summary>
    /// Extension beyond System.Net.Quic: this stream's send priority (RFC 9218 model, see <see cref="QuicStreamPriority"/>),
    /// <see cref="QuicStreamPriority.Default"/> until set. It can be changed at any time and applies to the data not sent
    /// yet. Local only: nothing is signalled to the peer. On the msquic provider the value is stored but not applied
    /// (System.Net.Quic has no priority API).
    /// </summary>
    /// <exception cref="ObjectDisposedException">Set after the stream was disposed.</exception>
    public QuicStreamPriority Priority
    {
        get => _impl.Priority;
        set => _impl.Priority = value;
    }

    /// <inheritdoc />
    public override bool CanRead => _impl.CanRead;

    /// <inheritdoc />
    public override bool CanWrite => _impl.CanWrite;

    /// <inheritdoc />
    public override bool CanSeek => false;

    /// <inheritdoc />
    public override bool CanTimeout => true;

    /// <inheritdoc />
    public override int ReadTimeout
    {
        get
        {
            ThrowIfDisposed();
            return _readTimeout;
        }
        set
        {
            ThrowIfDisposed();
            if (value <= 0 && value != Timeout.Infinite) throw new ArgumentOutOfRangeException(nameof(value), "Timeout must be positive or Timeout.Infinite.");
            _readTimeout = value;
        }
    }

    /// <inheritdoc />
    public override int WriteTimeout
    {
        get
        {
            ThrowIfDisposed();
            return _writeTimeout;
        }
        set
        {
            ThrowIfDisposed();
            if (value <= 0 && value != Timeout.Infinite) throw new ArgumentOutOfRangeException(nameof(value), "Timeout must be positive or Timeout.Infinite.");
            _writeTimeout = value;
        }
    }

    /// <inheritdoc />
    public override long Length => throw new NotSupportedException();

    /// <inheritdoc />
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    /// <inheritdoc />
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <inheritdoc />
    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadBlocking(buffer.AsMemory(offset, count));
    }

    /// <inheritdoc />
    public override int Read(Span<byte> buffer)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(Math.Max(1, buffer.Length));
        try
        {
            int n = ReadBlocking(rented.AsMemory(0, buffer.Length));
            rented.AsSpan(0, n).CopyTo(buffer);
            return n;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <inheritdoc />
    public override int ReadByte()
    {
        byte[] one = new byte[1];
        return ReadBlocking(one) == 0 ? -1 : one[0];
    }

    /// <summary>The synchronous reads block on the async path, bounded by <see cref="ReadTimeout"/>.</summary>
    private int ReadBlocking(Memory<byte> buffer)
    {
        if (_readTimeout == Timeout.Infinite) return _impl.ReadAsync(buffer, CancellationToken.None).AsTask().GetAwaiter().GetResult();
        using var timeout = new CancellationTokenSource(_readTimeout);
        try
        {
            return _impl.ReadAsync(buffer, timeout.Token).AsTask().GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            throw new IOException($"The read did not complete within ReadTimeout ({_readTimeout} ms).");
        }
    }

    private void WriteBlocking(ReadOnlyMemory<byte> buffer)
    {
        if (_writeTimeout == Timeout.Infinite)
        {
            _impl.WriteAsync(buffer, false, CancellationToken.None).AsTask().GetAwaiter().GetResult();
            return;
        }
        using var timeout = new CancellationTokenSource(_writeTimeout);
        try
        {
            _impl.WriteAsync(buffer, false, timeout.Token).AsTask().GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            throw new IOException($"The write did not complete within WriteTimeout ({_writeTimeout} ms).");
        }
    }

    /// <inheritdoc />
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken = default)
    {
        ValidateBufferArguments(buffer, offset, count);
        return _impl.ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    /// <inheritdoc />
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => _impl.ReadAsync(buffer, cancellationToken);

    /// <inheritdoc />
    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(ReadAsync(buffer, offset, count), callback, state);

    /// <inheritdoc />
    public override int EndRead(IAsyncResult asyncResult) => TaskToAsyncResult.End<int>(asyncResult);

    /// <inheritdoc />
    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        WriteBlocking(buffer.AsMemory(offset, count));
    }

    /// <inheritdoc />
    public override void Write(ReadOnlySpan<byte> buffer)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(Math.Max(1, buffer.Length));
        try
        {
            buffer.CopyTo(rented);
            WriteBlocking(rented.AsMemory(0, buffer.Length));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <inheritdoc />
    public override void WriteByte(byte value) => WriteBlocking(new[] { value });

    /// <inheritdoc />
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken = default)
    {
        ValidateBufferArguments(buffer, offset, count);
        return _impl.WriteAsync(buffer.AsMemory(offset, count), false, cancellationToken).AsTask();
    }

    /// <inheritdoc />
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => _impl.WriteAsync(buffer, false, cancellationToken);

    /// <summary>Writes <paramref name="buffer"/> and, when <paramref name="completeWrites"/> is true, ends the write side in the same frame.</summary>
    /// <param name="buffer">The data.</param>
    /// <param name="completeWrites">True to send FIN with the data.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    public ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken = default) => _impl.WriteAsync(buffer, completeWrites, cancellationToken);

    /// <inheritdoc />
    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count), callback, state);

    /// <inheritdoc />
    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);

    /// <inheritdoc />
    public override void Flush() => ThrowIfDisposed();

    /// <inheritdoc />
    public override Task FlushAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return Task.CompletedTask;
    }

    /// <summary>As the Stream contract asks: members other than disposal and the stream's identity throw once disposed.</summary>
    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _disposed = true;
            _impl.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
        base.Dispose(disposing);
    }

    /// <inheritdoc />
    public override ValueTask DisposeAsync()
    {
        _disposed = true;
        return _impl.DisposeAsync();
    }

    /// <inheritdoc />
    public override string ToString() => _impl.ToString() ?? nameof(QuicStream);
}
