using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Tests.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>
/// What a stream blocked on a slow reader costs in memory, on the core layer, in the deterministic simulator: a client
/// with 2,048-byte stream windows opens N streams, asks on each, and never reads; the server writes 64 KiB on each.
/// The managed heap both connections hold is measured after full collections (a memory bound, not a timing): the
/// stream chunks both budgets count, and the rest per stream (the stream objects of both ends: core stream, send and
/// receive sides with their chunk buffers inline, flow windows, one-slot chunk rings, the table entries). Measured
/// 1,455 B per stream for both ends together when run alone (`dotnet test tests/System.Net.Quic.Managed.Tests -c Release
/// --filter BlockedStreamMemoryTests`), 1,797 B when it follows the API-level test in the same process: data that arrives in order and acknowledgments that arrive in order need no
/// range set, so none of these streams holds one. Runs alone (no other test allocating live objects meanwhile).
/// </summary>
[Collection(nameof(HeapMeasurementCollection))]
public class BlockedStreamMemoryTests(ITestOutputHelper output)
{
    /// <summary>The bound on what a blocked stream holds besides its chunks, both ends together.</summary>
    private const long MaxBytesPerStream = 2_050;

    [Fact]
    public void BlockedStreamsCostAFewHundredBytesEachBesidesTheSendBudget()
    {
        const int streamCount = 1000;
        using QuicPair pair = SendBudgetTests.SlowReaderPair(streamCount);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        byte[] chunk = new byte[64 * 1024];
        long before = HeapMeasurement.LiveBytes();

        var requests = new Queue<long>();
        for (int i = 0; i < streamCount; i++)
        {
            Assert.True(client.TryOpenStream(unidirectional: false, out long id));
            requests.Enqueue(id);
        }
        var written = new HashSet<long>();
        for (int step = 0; step < 200; step++)
        {
            while (requests.TryPeek(out long request) && client.WriteStream(request, "GET /1M"u8, fin: true) > 0) requests.Dequeue();
            pair.Network.RunFor(10_000);
            foreach (TransportStream stream in server.Streams.Streams)
            {
                if (stream.Send is null) continue;
                server.ReadStream(stream.Id, chunk, out _, out _, out _);
                server.WriteStream(stream.Id, chunk, fin: false);
                written.Add(stream.Id);
            }
        }
        Assert.Equal(streamCount, written.Count);
        long after = HeapMeasurement.LiveBytes();
        long chunks = server.BufferBudget.ChunkBytes + client.BufferBudget.ChunkBytes;
        long perStream = (after - before - chunks) / streamCount;
        output.WriteLine($"heap +{after - before} B for {streamCount} streams on both ends; chunks held: server {server.BufferBudget.ChunkBytes} (send {server.BufferBudget.SendHeldBytes}, budget {server.BufferBudget.SendLimitBytes}, cwnd {server.CongestionController.CongestionWindow}), client {client.BufferBudget.ChunkBytes}; the rest {perStream} B per stream (both ends)");
        GC.KeepAlive(pair);
        Assert.InRange(perStream, 1, MaxBytesPerStream);
        // The peer's 256 KiB of connection credit is all the path can use: the budget does not follow the congestion
        // window past it (at most one 1.5x step above the minimum), and the server holds at most twice the budget.
        Assert.InRange(server.BufferBudget.SendLimitBytes, ConnectionBufferBudget.MinimumSendBytes, ConnectionBufferBudget.MinimumSendBytes * 3 / 2);
        Assert.InRange(server.BufferBudget.SendHeldBytes, 1, 2 * server.BufferBudget.SendLimitBytes);
        // The client holds what the server could send, one chunk per stream that got data (2,048 bytes each).
        Assert.InRange(client.BufferBudget.ChunkBytes, 1, 256 * 1024 * 3);
    }

}

/// <summary>Tests that measure the process's live heap: they run alone.</summary>
[CollectionDefinition(nameof(HeapMeasurementCollection), DisableParallelization = true)]
public sealed class HeapMeasurementCollection;

/// <summary>The live managed heap of the process, for the tests of <see cref="HeapMeasurementCollection"/>.</summary>
internal static class HeapMeasurement
{
    /// <summary>After full compacting collections, with the pooled stream chunks given back: the bytes still live.</summary>
    public static long LiveBytes()
    {
        for (int i = 0; i < 2; i++)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            GC.WaitForPendingFinalizers();
            StreamChunkPool.Trim();
        }
        return GC.GetTotalMemory(forceFullCollection: true);
    }
}
