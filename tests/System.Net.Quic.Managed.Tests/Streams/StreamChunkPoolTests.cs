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
}
