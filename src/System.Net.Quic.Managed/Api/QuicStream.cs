using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>A QUIC stream: a <see cref="Stream"/> that reads and writes like SslStream. Mirrors System.Net.Quic.QuicStream.</summary>
public sealed class QuicStream : Stream
{
    private QuicStream()
    {
    }

    /// <summary>The stream ID (RFC 9000 §2.1).</summary>
    public long Id => throw TransportNotReady.Exception();

    /// <summary>Unidirectional or bidirectional.</summary>
    public QuicStreamType Type => throw TransportNotReady.Exception();

    /// <summary>Completes when the read side is closed: all data read, or aborted (then faulted with a <see cref="QuicException"/>).</summary>
    public Task ReadsClosed => throw TransportNotReady.Exception();

    /// <summary>Completes when the write side is closed: all data acknowledged, or aborted (then faulted).</summary>
    public Task WritesClosed => throw TransportNotReady.Exception();

    /// <summary>Aborts the read side (STOP_SENDING), the write side (RESET_STREAM) or both with an application error code.</summary>
    /// <param name="abortDirection">Which side(s) to abort.</param>
    /// <param name="errorCode">The application error code, 0 to 2^62-1.</param>
    public void Abort(QuicAbortDirection abortDirection, long errorCode) => throw TransportNotReady.Exception();

    /// <summary>Gracefully ends the write side: the peer reads to the end (FIN).</summary>
    public void CompleteWrites() => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override bool CanRead => false;

    /// <inheritdoc />
    public override bool CanWrite => false;

    /// <inheritdoc />
    public override bool CanSeek => false;

    /// <inheritdoc />
    public override bool CanTimeout => true;

    /// <inheritdoc />
    public override int ReadTimeout { get; set; } = Timeout.Infinite;

    /// <inheritdoc />
    public override int WriteTimeout { get; set; } = Timeout.Infinite;

    /// <inheritdoc />
    public override long Length => throw new NotSupportedException();

    /// <inheritdoc />
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    /// <inheritdoc />
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <inheritdoc />
    public override int Read(byte[] buffer, int offset, int count) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override int Read(Span<byte> buffer) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override int ReadByte() => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override int EndRead(IAsyncResult asyncResult) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override void Write(byte[] buffer, int offset, int count) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override void Write(ReadOnlySpan<byte> buffer) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override void WriteByte(byte value) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <summary>Writes <paramref name="buffer"/> and, when <paramref name="completeWrites"/> is true, ends the write side in the same frame.</summary>
    /// <param name="buffer">The data.</param>
    /// <param name="completeWrites">True to send FIN with the data.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    public ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override void EndWrite(IAsyncResult asyncResult) => throw TransportNotReady.Exception();

    /// <inheritdoc />
    public override void Flush()
    {
    }

    /// <inheritdoc />
    public override Task FlushAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

    /// <inheritdoc />
    public override ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <inheritdoc />
    public override string ToString() => nameof(QuicStream);
}
