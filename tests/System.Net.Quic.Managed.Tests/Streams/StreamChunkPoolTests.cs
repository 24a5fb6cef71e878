using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>Chunks cached per thread go back to the GC at a full collection (<see cref="StreamChunkPool"/>).</summary>
public class StreamChunkPoolTests
{
    [Fact]
    public void ReturnedChunksAreReusedOnTheSameThread()
    {
        byte[] chunk = StreamChunkPool.Rent(StreamChunkBuffer.DefaultChunkSize);
        StreamChunkPool.Return(chunk);
        Assert.Same(chunk, StreamChunkPool.Rent(StreamChunkBuffer.DefaultChunkSize));
    }

    [Fact]
    public void TrimEmptiesTheThreadsList()
    {
        for (int i = 0; i < 100; i++) StreamChunkPool.Return(new byte[StreamChunkBuffer.DefaultChunkSize]);
        Assert.True(StreamChunkPool.CachedOnThisThread >= 100);
        StreamChunkPool.Trim();
        Assert.Equal(0, StreamChunkPool.CachedOnThisThread);
    }

    [Fact]
    public void AFullCollectionEmptiesTheThreadsList()
    {
        for (int i = 0; i < 100; i++) StreamChunkPool.Return(new byte[StreamChunkBuffer.DefaultChunkSize]);
        Assert.True(StreamChunkPool.CachedOnThisThread >= 100);
        // The trim runs from a finalizer after a full collection (a second round covers its first, pre-generation-2 run).
        for (int round = 0; round < 3 && StreamChunkPool.CachedOnThisThread > 0; round++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.Equal(0, StreamChunkPool.CachedOnThisThread);
    }
    [Fact]
    public void ChunksGivenBackFromAnotherThreadAreRentedAgainByTheirOwner()
    {
        // The owner (a driver thread) hands chunks to a reader on another thread, which gives them back to the owner's
        // list, not its own; the owner then rents the same arrays again without allocating.
        RunOnNewThread(() =>
        {
            object owner = StreamChunkPool.ThreadCache;
            var chunks = new byte[64][];
            for (int i = 0; i < chunks.Length; i++) chunks[i] = StreamChunkPool.Rent(StreamChunkBuffer.DefaultChunkSize);
            Assert.Equal(0, StreamChunkPool.CachedOnThisThread);
            RunOnNewThread(() =>
            {
                foreach (byte[] chunk in chunks) StreamChunkPool.ReturnTo(owner, chunk);
                Assert.Equal(0, StreamChunkPool.CachedOnThisThread); // not the reader's list
            });
            var rentedAgain = new byte[chunks.Length][];
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < rentedAgain.Length; i++) rentedAgain[i] = StreamChunkPool.Rent(StreamChunkBuffer.DefaultChunkSize);
            Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
            Assert.Equal(new HashSet<byte[]>(chunks, ReferenceEqualityComparer.Instance), new HashSet<byte[]>(rentedAgain, ReferenceEqualityComparer.Instance));
        });
    }

    private static void RunOnNewThread(Action action)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try { action(); }
            catch (Exception e) { failure = e; }
        });
        thread.Start();
        thread.Join();
        if (failure is not null) throw new Xunit.Sdk.XunitException(failure.ToString());
    }
}
