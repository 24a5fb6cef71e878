using System.Net.Quic.Managed.Bridge;
namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// A stream's receive queue between the driver and ReadAsync: a few bytes arriving at an empty queue take a small
/// array, not a 16 KiB chunk; later arrivals go into full chunks behind it; every byte reads back in order.
/// </summary>
public class StreamReceiveQueueTests
{
    [Fact]
    public void AFewBytesIntoAnEmptyQueueTakeASmallArray()
    {
        var queue = new StreamReceiveQueue();
        Span<byte> space = queue.GetWriteSpan(readable: 8);
        Assert.InRange(space.Length, 8, StreamReceiveQueue.SmallArrivalBytes);
        "GET /1M\n"u8.CopyTo(space);
        queue.Advance(8);
        byte[] read = new byte[16];
        Assert.Equal(8, queue.CopyTo(read));
        Assert.True(read.AsSpan(0, 8).SequenceEqual("GET /1M\n"u8));
        Assert.True(queue.IsEmpty);
        // More than the small size goes into a full chunk; once it has, small arrivals take chunks too (a transfer).
        Assert.Equal(StreamReceiveQueue.ChunkSize, queue.GetWriteSpan(readable: StreamReceiveQueue.SmallArrivalBytes + 1).Length);
        queue.Advance(1);
        Assert.Equal(1, queue.CopyTo(read));
        Assert.True(queue.IsEmpty);
        Assert.Equal(StreamReceiveQueue.ChunkSize, queue.GetWriteSpan(readable: 8).Length);
        queue.Clear();
    }

    [Fact]
    public void BytesAfterASmallFirstArrayReadBackInOrder()
    {
        var queue = new StreamReceiveQueue();
        var expected = new byte[100_000];
        new Random(7).NextBytes(expected);
        int written = 0;
        // A small first arrival, then arrivals of assorted sizes while nothing is read: small array, then chunks.
        foreach (int size in new[] { 100, 5_000, 20_000, 1, 74_899 })
        {
            int left = size;
            while (left > 0)
            {
                Span<byte> space = queue.GetWriteSpan(readable: left);
                int n = Math.Min(left, space.Length);
                expected.AsSpan(written, n).CopyTo(space);
                queue.Advance(n);
                written += n;
                left -= n;
            }
        }
        Assert.Equal(expected.Length, queue.Length);
        var actual = new byte[expected.Length];
        int got = 0;
        while (got < actual.Length)
        {
            int n = queue.CopyTo(actual.AsSpan(got, Math.Min(3_000, actual.Length - got)));
            Assert.True(n > 0);
            got += n;
        }
        Assert.True(actual.AsSpan().SequenceEqual(expected));
        Assert.True(queue.IsEmpty);
        queue.Clear();
    }
    [Fact]
    public void TakenChunksAndCopiedBytesReadBackInTheirOrder()
    {
        var queue = new StreamReceiveQueue();
        var expected = new byte[40_000];
        new Random(11).NextBytes(expected);
        int written = 0;
        // Copied bytes, taken chunks (the first from its middle), copied bytes again, and taken chunks behind them.
        Copy(1_000);
        Take(96, 4_000);
        Take(0, 4_096);
        Copy(3_000);
        Copy(20_000);
        Take(0, 4_096);
        Copy(expected.Length - written);
        Assert.Equal(expected.Length, queue.Length);

        var read = new byte[expected.Length];
        int total = 0;
        foreach (int size in new[] { 1, 999, 4_096, 7, 30_000, 10_000 })
        {
            total += queue.CopyTo(read.AsSpan(total, Math.Min(size, read.Length - total)));
        }
        Assert.Equal(expected.Length, total);
        Assert.True(read.AsSpan().SequenceEqual(expected));
        Assert.True(queue.IsEmpty);
        queue.Clear();

        void Copy(int count)
        {
            int done = 0;
            while (done < count)
            {
                Span<byte> space = queue.GetWriteSpan(count - done);
                int n = Math.Min(space.Length, count - done);
                expected.AsSpan(written, n).CopyTo(space);
                queue.Advance(n);
                written += n;
                done += n;
            }
        }

        void Take(int start, int length)
        {
            byte[] chunk = new byte[start + length];
            expected.AsSpan(written, length).CopyTo(chunk.AsSpan(start));
            queue.AppendTaken(chunk, start, length);
            written += length;
        }
    }
}
