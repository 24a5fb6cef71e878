using System.Buffers;
using System.Threading;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The chunks of stream send and receive buffers (<see cref="StreamChunkBuffer"/>). <see cref="ArrayPool{T}.Shared"/>
/// keeps a few dozen arrays per size and core, while one 16 MiB flow-control window spans 4,096 chunks, so under load
/// most rentals allocated (a profile of QuicPerf put ~90% of the allocated bytes there). A connection's buffers are used
/// by the one thread that runs it (its I/O driver), so chunks come back to the thread that rented them: a bounded
/// per-thread free list serves them. A chunk returned on another thread joins that thread's list, except the receive
/// chunks a driver handed to the application's reader (<see cref="ReturnTo"/>): those go back to the driver's list, into
/// a given-back part with a flag of its own that the driver takes over in one move when its own part runs empty.
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
        if (cache is not null && (cache.Count > 0 || (Volatile.Read(ref cache.GivenBackCount) > 0 && cache.TakeGivenBack())) && cache.TryEnter())
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

    /// <summary>
    /// Any thread: gives <paramref name="chunk"/> back to the list <paramref name="threadCache"/> (<see cref="ThreadCache"/>).
    /// It goes into that list's given-back part, which has a lock of its own: the owner, renting and returning all the
    /// time, never makes a reader wait, and takes the given-back chunks over in one move when its own part runs empty.
    /// </summary>
    public static void ReturnTo(object threadCache, byte[] chunk)
    {
        if (chunk.Length != StreamChunkBuffer.DefaultChunkSize)
        {
            ArrayPool<byte>.Shared.Return(chunk);
            return;
        }
        ((ChunkCache)threadCache).GiveBack(chunk);
    }

    /// <summary>Chunks cached on all threads now (diagnostics and tests).</summary>
    public static int CachedChunks
    {
        get
        {
            int total = 0;
            for (CacheNode? node = Volatile.Read(ref s_caches); node is not null; node = node.Next)
            {
                if (node.Cache.TryGetTarget(out ChunkCache? cache)) total += Volatile.Read(ref cache.Count) + Volatile.Read(ref cache.GivenBackCount);
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
            if (!node.Cache.TryGetTarget(out ChunkCache? cache)) continue;
            if (cache.TryEnter())
            {
                Array.Clear(cache.Items, 0, cache.Count);
                cache.Count = 0;
                cache.Exit();
            }
            cache.DropGivenBack();
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

        // Chunks other threads gave back (ReturnTo), under a flag of their own: readers hold it for one store, the
        // owner for one copy of the lot. Created with the first chunk given back (a driver's list only).
        private byte[]?[]? _givenBack;
        public int GivenBackCount;
        private int _givenBackBusy;

        public bool TryEnter() => Interlocked.CompareExchange(ref _busy, 1, 0) == 0;

        public void Exit() => Volatile.Write(ref _busy, 0);

        /// <summary>Any thread: adds a chunk to the given-back part (beyond the bound, or should the flag stay taken
        /// through a thousand tries, it is left to the GC).</summary>
        public void GiveBack(byte[] chunk)
        {
            for (int attempt = 0; Interlocked.CompareExchange(ref _givenBackBusy, 1, 0) != 0; attempt++)
            {
                if (attempt == 1000) return;
            }
            byte[]?[] givenBack = _givenBack ??= new byte[MaxCachedChunksPerThread][];
            if (GivenBackCount < givenBack.Length) givenBack[GivenBackCount++] = chunk;
            Volatile.Write(ref _givenBackBusy, 0);
        }

        /// <summary>Owner: moves the given-back chunks into its own part; true when any came.</summary>
        public bool TakeGivenBack()
        {
            if (Interlocked.CompareExchange(ref _givenBackBusy, 1, 0) != 0) return false;
            if (!TryEnter())
            {
                Volatile.Write(ref _givenBackBusy, 0);
                return false;
            }
            int moved = Math.Min(GivenBackCount, Items.Length - Count);
            if (moved > 0)
            {
                Array.Copy(_givenBack!, GivenBackCount - moved, Items, Count, moved);
                Array.Clear(_givenBack!, GivenBackCount - moved, moved);
            }
            GivenBackCount -= moved;
            Count += moved;
            Exit();
            Volatile.Write(ref _givenBackBusy, 0);
            return moved > 0;
        }

        /// <summary>The trim: the given-back chunks go to the GC (unless a reader holds them at that moment).</summary>
        public void DropGivenBack()
        {
            if (Interlocked.CompareExchange(ref _givenBackBusy, 1, 0) != 0) return;
            if (_givenBack is not null) Array.Clear(_givenBack, 0, GivenBackCount);
            GivenBackCount = 0;
            Volatile.Write(ref _givenBackBusy, 0);
        }
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
