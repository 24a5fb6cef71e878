using System.Buffers;
using System.Threading;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The chunks of stream send and receive buffers (<see cref="StreamChunkBuffer"/>). <see cref="ArrayPool{T}.Shared"/>
/// keeps a few dozen arrays per size and core, while one 16 MiB flow-control window spans 4,096 chunks, so under load
/// most rentals allocated (a profile of QuicPerf put ~90% of the allocated bytes there). A connection's buffers are used
/// by the one thread that runs it (its I/O driver), so chunks come back to the thread that rented them: a bounded
/// per-thread free list serves them. A chunk returned on another thread joins that thread's list.
/// <para>
/// The lists are emptied at every full (generation 2) garbage collection, so the memory of connections that ended goes
/// back to the GC instead of staying cached on a driver thread that has gone quiet; a busy thread refills its list
/// within a few packets. Each list has a busy flag the owner takes (one interlocked exchange per rent or return) and the
/// trim skips a list its owner holds at that moment.
/// </para>
/// </summary>
internal static class StreamChunkPool
{
    /// <summary>Chunks kept per thread: 8,192 of 4 KiB (32 MiB), enough for a pair of 16 MiB windows in flight.</summary>
    public const int MaxCachedChunksPerThread = 8192;

    [ThreadStatic]
    private static ChunkCache? t_cache;

    // Every thread's list, newest first; pushed with compare-exchange, walked by the trim.
    private static CacheNode? s_caches;

    static StreamChunkPool() => _ = new Gen2Trim();

    public static byte[] Rent(int size)
    {
        if (size != StreamChunkBuffer.DefaultChunkSize) return ArrayPool<byte>.Shared.Rent(size);
        ChunkCache? cache = t_cache;
        if (cache is not null && cache.Count > 0 && Enter(cache))
        {
            byte[]? chunk = cache.Count > 0 ? cache.Items[--cache.Count] : null;
            if (chunk is not null) cache.Items[cache.Count] = null;
            cache.Exit();
            if (chunk is not null) return chunk;
        }
        // Stream bytes are always written before they are read: no need to zero a new chunk.
        return GC.AllocateUninitializedArray<byte>(size);
    }

    public static void Return(byte[] chunk)
    {
        if (chunk.Length != StreamChunkBuffer.DefaultChunkSize)
        {
            ArrayPool<byte>.Shared.Return(chunk);
            return;
        }
        ChunkCache cache = t_cache ?? CreateCache();
        // Beyond the bound, or while the trim holds the list, the chunk is left to the GC.
        if (!cache.TryEnter()) return;
        if (cache.Count < cache.Items.Length) cache.Items[cache.Count++] = chunk;
        cache.Exit();
    }

    /// <summary>
    /// The calling thread's list, as a handle another thread gives chunks back to (<see cref="ReturnTo"/>): a chunk a
    /// driver thread took out of a stream's receive buffer and handed to the application's reader goes back to that
    /// driver's list when the reader drained it, not to the reader's thread, where no driver would rent it again.
    /// </summary>
    public static object ThreadCache => t_cache ?? CreateCache();

    /// <summary>Any thread: gives <paramref name="chunk"/> back to the list <paramref name="threadCache"/> (<see cref="ThreadCache"/>).</summary>
    public static void ReturnTo(object threadCache, byte[] chunk)
    {
        if (chunk.Length != StreamChunkBuffer.DefaultChunkSize)
        {
            ArrayPool<byte>.Shared.Return(chunk);
            return;
        }
        var cache = (ChunkCache)threadCache;
        // Beyond the bound, or while the trim holds the list, the chunk is left to the GC.
        if (!Enter(cache)) return;
        if (cache.Count < cache.Items.Length) cache.Items[cache.Count++] = chunk;
        cache.Exit();
    }

    /// <summary>
    /// Takes a list: its owner and a reader giving chunks back (<see cref="ReturnTo"/>) each hold it for a few
    /// instructions, so a short wait gets it; the trim may hold it longer, and then the caller does without.
    /// </summary>
    private static bool Enter(ChunkCache cache)
    {
        for (int attempt = 0; attempt < 64; attempt++)
        {
            if (cache.TryEnter()) return true;
        }
        return false;
    }

    /// <summary>Chunks cached on all threads now (diagnostics and tests).</summary>
    public static int CachedChunks
    {
        get
        {
            int total = 0;
            for (CacheNode? node = Volatile.Read(ref s_caches); node is not null; node = node.Next)
            {
                if (node.Cache.TryGetTarget(out ChunkCache? cache)) total += Volatile.Read(ref cache.Count);
            }
            return total;
        }
    }

    /// <summary>Chunks cached on the calling thread (tests).</summary>
    public static int CachedOnThisThread => t_cache?.Count ?? 0;

    /// <summary>Empties every thread's list that is not in use at this moment.</summary>
    public static void Trim()
    {
        for (CacheNode? node = Volatile.Read(ref s_caches); node is not null; node = node.Next)
        {
            if (!node.Cache.TryGetTarget(out ChunkCache? cache) || !cache.TryEnter()) continue;
            Array.Clear(cache.Items, 0, cache.Count);
            cache.Count = 0;
            cache.Exit();
        }
    }

    private static ChunkCache CreateCache()
    {
        var cache = new ChunkCache();
        var node = new CacheNode(new WeakReference<ChunkCache>(cache));
        CacheNode? head;
        do
        {
            head = Volatile.Read(ref s_caches);
            node.Next = head;
        }
        while (Interlocked.CompareExchange(ref s_caches, node, head) != head);
        t_cache = cache;
        return cache;
    }

    private sealed class ChunkCache
    {
        public readonly byte[]?[] Items = new byte[MaxCachedChunksPerThread][];
        public int Count;
        private int _busy;

        public bool TryEnter() => Interlocked.CompareExchange(ref _busy, 1, 0) == 0;

        public void Exit() => Volatile.Write(ref _busy, 0);
    }

    private sealed class CacheNode(WeakReference<ChunkCache> cache)
    {
        public readonly WeakReference<ChunkCache> Cache = cache;
        public CacheNode? Next;
    }

    /// <summary>Unreachable from its creation: its finalizer runs after the collections that find it dead, which once it
    /// reaches generation 2 are the full ones; each run trims and re-registers it.</summary>
    private sealed class Gen2Trim
    {
        ~Gen2Trim()
        {
            if (Environment.HasShutdownStarted) return;
            Trim();
            GC.ReRegisterForFinalize(this);
        }
    }
}
