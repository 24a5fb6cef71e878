using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// IDs of one worker (one socket and driver) of a listener that runs several on the same port: the last octet of every
/// ID is a random value congruent to the worker's index modulo the worker count, so the kernel's reuseport program (a
/// load and a modulo, <c>Io/ReusePortGroup</c>) and any worker that receives a stray packet find the owner without
/// state or keys. The other octets come from <see cref="Inner"/> (random, or QUIC-LB with one trailing octet of server
/// use, which a QUIC-LB load balancer ignores). What an observer learns is the worker's index: which of a few threads
/// of the same server holds the connection (msquic's IDs carry their partition index in the clear too).
/// </summary>
internal sealed class WorkerTaggedConnectionIdGenerator : ConnectionIdGenerator
{
    public WorkerTaggedConnectionIdGenerator(ConnectionIdGenerator inner, int worker, int workerCount)
    {
        if (inner.Length < 1) throw new ArgumentException("A worker tag needs a connection ID of at least one octet.", nameof(inner));
        if (workerCount < 1 || workerCount > 256) throw new ArgumentOutOfRangeException(nameof(workerCount));
        if ((uint)worker >= (uint)workerCount) throw new ArgumentOutOfRangeException(nameof(worker));
        Inner = inner;
        Worker = worker;
        WorkerCount = workerCount;
    }

    public ConnectionIdGenerator Inner { get; }

    public int Worker { get; }

    public int WorkerCount { get; }

    public override int Length => Inner.Length;

    /// <summary>Offset of the tag in a short-header packet (first byte, then the ID): what the kernel program loads.</summary>
    public int TagOffsetInShortHeader => Length;

    public override ConnectionId Create(IRandomSource random)
    {
        ConnectionId inner = Inner.Create(random);
        Span<byte> id = stackalloc byte[ConnectionId.MaxLength];
        id = id.Slice(0, inner.Length);
        inner.Span.CopyTo(id);
        id[^1] = Tag(id[^1], Worker, WorkerCount);
        return new ConnectionId(id);
    }

    /// <summary>A byte ≡ <paramref name="worker"/> (mod <paramref name="workerCount"/>), spread over 0..255 by <paramref name="random"/>.</summary>
    public static byte Tag(byte random, int worker, int workerCount)
    {
        int slots = (255 - worker) / workerCount + 1; // values worker, worker + n, ... that fit in a byte
        return (byte)(worker + workerCount * (random % slots));
    }

    /// <summary>The worker an ID of this listener belongs to.</summary>
    public static int WorkerOf(ReadOnlySpan<byte> connectionId, int workerCount) => connectionId[^1] % workerCount;
}
