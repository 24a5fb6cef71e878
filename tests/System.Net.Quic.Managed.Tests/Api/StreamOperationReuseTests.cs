using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// A managed stream reuses one read and one write operation object (no allocation per ReadAsync/WriteAsync). These
/// tests check what reuse could break: a cancellation that fires after its operation finished must not cancel the next
/// one, concurrent operations are still refused, and a cancelled read still aborts the read side.
/// </summary>
public class StreamOperationReuseTests
{
    /// <summary>A connected pair and one bidirectional stream whose first byte was exchanged (both ends exist).</summary>
    private static async Task WithStreamAsync(Func<QuicStream, QuicStream, CancellationToken, Task> body)
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await outbound.WriteAsync(new byte[] { 0 }, timeout.Token);
            await using QuicStream inbound = await server.AcceptInboundStreamAsync(timeout.Token);
            Assert.Equal(1, await inbound.ReadAsync(new byte[1], timeout.Token));
            await body(outbound, inbound, timeout.Token);
        }
    }

    [Fact]
    public Task LateCancellationsDoNotTouchLaterOperations() => WithStreamAsync(async (outbound, inbound, ct) =>
    {
        byte[] one = new byte[1];
        for (int i = 1; i <= 200; i++)
        {
            using var writeCts = new CancellationTokenSource();
            await outbound.WriteAsync(new[] { (byte)i }, writeCts.Token);
            writeCts.Cancel(); // after completion: must not reach the next write

            using var readCts = new CancellationTokenSource();
            int n = await inbound.ReadAsync(one, readCts.Token);
            readCts.Cancel(); // after completion: must not reach the next read
            Assert.Equal(1, n);
            Assert.Equal((byte)i, one[0]);
        }
        Assert.False(inbound.ReadsClosed.IsCompleted);
        Assert.False(outbound.WritesClosed.IsCompleted);
    });

    [Fact]
    public Task ConcurrentReadIsRefusedAndCancelledReadAbortsReading() => WithStreamAsync(async (outbound, inbound, ct) =>
    {
        using var cts = new CancellationTokenSource();
        ValueTask<int> pending = inbound.ReadAsync(new byte[1], cts.Token);
        Assert.Throws<InvalidOperationException>(() => { _ = inbound.ReadAsync(new byte[1], ct); });
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await pending);
        // System.Net.Quic semantics: a cancelled read aborts the read side.
        QuicException e = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(new byte[1], ct));
        Assert.Equal(QuicError.OperationAborted, e.QuicError);
    });

    [Fact]
    public Task ReadsOfBufferedDataCompleteSynchronouslyWithoutAllocating() => WithStreamAsync(async (outbound, inbound, ct) =>
    {
        await outbound.WriteAsync(new byte[48 * 1024], ct); // within the 64 KiB stream window
        byte[] buffer = new byte[1024];
        Assert.True(await inbound.ReadAsync(buffer, ct) > 0);
        await Task.Delay(300, ct); // everything is buffered by now
        // Both batches on this thread, without an await between them: the first warms up what is allocated once per
        // stream (the credit report item). The chunk pool fills on first use: warmed up here with two returns.
        Assert.Equal(20, SynchronousReads(inbound, buffer, 20, ct));
        byte[] a = StreamReceiveQueue.Chunks.Rent(StreamReceiveQueue.ChunkSize);
        byte[] b = StreamReceiveQueue.Chunks.Rent(StreamReceiveQueue.ChunkSize);
        StreamReceiveQueue.Chunks.Return(a);
        StreamReceiveQueue.Chunks.Return(b);
        long before = GC.GetAllocatedBytesForCurrentThread();
        int synchronous = SynchronousReads(inbound, buffer, 20, ct);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(20, synchronous);
        Assert.Equal(0, allocated); // a chunk boundary and a credit report (one per quarter window) included
    });

    [Fact]
    public Task AReadCompletedBeforeAResetArrivesKeepsItsBytes() => WithStreamAsync(async (outbound, inbound, ct) =>
    {
        // The read completes when the bytes arrive and takes them as its result is taken: a reset that arrives in
        // between must not take them away (they are the read's, as if already copied into its buffer).
        byte[] buffer = new byte[64];
        ValueTask<int> read = inbound.ReadAsync(buffer, ct);
        await outbound.WriteAsync("abc"u8.ToArray(), ct);
        while (!read.IsCompleted) await Task.Delay(5, ct);
        outbound.Abort(QuicAbortDirection.Write, 7);
        await Assert.ThrowsAnyAsync<Exception>(() => inbound.ReadsClosed.WaitAsync(ct)); // the reset has arrived
        Assert.Equal(3, read.Result);
        Assert.True(buffer.AsSpan(0, 3).SequenceEqual("abc"u8));
        QuicException e = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(buffer, ct));
        Assert.Equal(QuicError.StreamAborted, e.QuicError);
        Assert.Equal(7, e.ApplicationErrorCode);
    });

    private static int SynchronousReads(QuicStream stream, byte[] buffer, int count, CancellationToken ct)
    {
        for (int i = 0; i < count; i++)
        {
            ValueTask<int> read = stream.ReadAsync(buffer, ct);
            if (!read.IsCompleted || read.Result != buffer.Length) return i;
        }
        return count;
    }
}
