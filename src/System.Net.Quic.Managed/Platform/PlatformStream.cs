#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported.
using System.Threading;
using System.Threading.Tasks;
using P = System.Net.Quic;

namespace System.Net.Quic.Managed.Platform;

/// <summary>A <see cref="QuicStream"/> delegating to a System.Net.Quic stream (msquic provider).</summary>
internal sealed class PlatformStream : QuicStreamImpl
{
    private readonly P.QuicStream _inner;
    private readonly Task _readsClosed;
    private readonly Task _writesClosed;
    private QuicStreamPriority _priority;
    private int _disposed;

    public PlatformStream(P.QuicStream inner)
    {
        _inner = inner;
        _readsClosed = PlatformExceptions.Translate(inner.ReadsClosed);
        _writesClosed = PlatformExceptions.Translate(inner.WritesClosed);
    }

    public override long Id => _inner.Id;

    public override QuicStreamType Type => (QuicStreamType)(int)_inner.Type;

    public override bool CanRead => _inner.CanRead;

    public override bool CanWrite => _inner.CanWrite;

    public override Task ReadsClosed => _readsClosed;

    public override Task WritesClosed => _writesClosed;

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        try
        {
            return await _inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken)
    {
        try
        {
            await _inner.WriteAsync(buffer, completeWrites, cancellationToken).ConfigureAwait(false);
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override void Abort(QuicAbortDirection direction, long errorCode) => _inner.Abort((P.QuicAbortDirection)(int)direction, errorCode);

    public override void CompleteWrites() => _inner.CompleteWrites();

    // System.Net.Quic exposes no stream priority (msquic has QUIC_PARAM_STREAM_PRIORITY, but the .NET wrapper does not
    // surface it): the value is stored so the property round-trips, and msquic schedules as it always does.
    public override QuicStreamPriority Priority
    {
        get => _priority;
        set
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
            _priority = value;
        }
    }

    public override ValueTask DisposeAsync()
    {
        Volatile.Write(ref _disposed, 1);
        return _inner.DisposeAsync();
    }

    public override string ToString() => _inner.ToString();
}
