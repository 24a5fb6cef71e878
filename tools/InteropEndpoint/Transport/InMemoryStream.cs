namespace QuicManaged.Interop.Transport;

/// <summary>A stream over two <see cref="InMemoryPipe"/>s (either may be null for a unidirectional stream's missing half).</summary>
internal sealed class InMemoryStream : Stream, IMultiplexedStream
{
    private readonly InMemoryPipe? _readPipe;
    private readonly InMemoryPipe? _writePipe;

    public InMemoryStream(InMemoryPipe? readPipe, InMemoryPipe? writePipe, bool bidirectional)
    {
        _readPipe = readPipe;
        _writePipe = writePipe;
        IsBidirectional = bidirectional;
    }

    Stream IMultiplexedStream.Stream => this;

    public bool IsBidirectional { get; }

    public long Id { get; init; }

    public override bool CanRead => _readPipe is not null;

    public override bool CanWrite => _writePipe is not null;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public void CompleteWrites() => _writePipe?.Complete();

    public void Abort(long errorCode)
    {
        _writePipe?.Fault(errorCode);
        _readPipe?.Fault(errorCode);
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => (_readPipe ?? throw new NotSupportedException("write-only stream")).ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer) => (_writePipe ?? throw new NotSupportedException("read-only stream")).Write(buffer);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Write(buffer.Span);
        return ValueTask.CompletedTask;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }
}
