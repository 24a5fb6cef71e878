using System.Buffers;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The chunks of stream send and receive buffers (<see cref="StreamChunkBuffer"/>). <see cref="ArrayPool{T}.Shared"/>
/// keeps a few dozen arrays per size and core, while one 16 MiB flow-control window spans 4,096 chunks, so under load
/// most rentals allocated (a profile of QuicPerf put ~90% of the allocated bytes there). A connection's buffers are used
/// by the one thread that runs it (its I/O driver), so chunks come back to the thread that rented them: a bounded
/// per-thread free list needs no synchronisation. A chunk returned on another thread joins that thread's list.
/// </summary>
internal static class StreamChunkPool
{
    /// <summary>Chunks kept per thread: 8,192 of 4 KiB (32 MiB), enough for a pair of 16 MiB windows in flight.</summary>
    public const int MaxCachedChunksPerThread = 8192;

    [ThreadStatic]
    private static byte[][]? t_free;

    [ThreadStatic]
    private static int t_count;

    public static byte[] Rent(int size)
    {
        if (size != StreamChunkBuffer.DefaultChunkSize) return ArrayPool<byte>.Shared.Rent(size);
        byte[][]? free = t_free;
        if (free is not null && t_count > 0)
        {
            byte[] chunk = free[--t_count];
            free[t_count] = null!;
            return chunk;
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
        byte[][] free = t_free ??= new byte[MaxCachedChunksPerThread][];
        if (t_count < free.Length) free[t_count++] = chunk;
        // Beyond the bound the chunk is left to the GC.
    }
}
