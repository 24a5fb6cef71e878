using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>What a <see cref="QuicStream"/> runs on: the managed transport or a System.Net.Quic stream.</summary>
internal abstract class QuicStreamImpl
{
    public abstract long Id { get; }

    public abstract QuicStreamType Type { get; }

    public abstract bool CanRead { get; }

    public abstract bool CanWrite { get; }

    public abstract Task ReadsClosed { get; }

    public abstract Task WritesClosed { get; }

    public abstract ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken);

    public abstract ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken);

    public abstract void Abort(QuicAbortDirection direction, long errorCode);

    public abstract void CompleteWrites();

    /// <summary>The send priority; setting it applies from the next packet on (managed) or is only stored (msquic).</summary>
    public abstract QuicStreamPriority Priority { get; set; }

    public abstract ValueTask DisposeAsync();
}
