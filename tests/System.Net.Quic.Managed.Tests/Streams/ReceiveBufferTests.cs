using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

public class ReceiveBufferTests
{
    private static byte[] Pattern(int length, int seed = 7)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    private static TransportErrorCode Insert(ReceiveBuffer buffer, long offset, ReadOnlySpan<byte> data, bool fin = false)
        => buffer.Insert(offset, data, fin, out _);

    private static byte[] ReadAll(ReceiveBuffer buffer)
    {
        var result = new List<byte>();
        var chunk = new byte[37];
        int n;
        while ((n = buffer.Read(chunk)) > 0)
        {
            result.AddRange(chunk.AsSpan(0, n).ToArray());
        }

        return result.ToArray();
    }

    [Fact]
    public void OrderedInsertsReadBack()
    {
        byte[] data = Pattern(10000);
        var buffer = new ReceiveBuffer(limit: 10000, chunkSize: 1024);
        for (int off = 0; off < data.Length; off += 1000)
        {
            Assert.Equal(TransportErrorCode.NoError, Insert(buffer, off, data.AsSpan(off, 1000), fin: off + 1000 == data.Length));
        }

        Assert.True(buffer.IsAllDataReceived);
        Assert.False(buffer.IsFinished);
        Assert.Equal(data, ReadAll(buffer));
        Assert.True(buffer.IsFinished);
        Assert.Equal(0, buffer.AllocatedBytes);
    }

    [Fact]
    public void ReorderedInsertsAreHeldUntilContiguous()
    {
        byte[] data = Pattern(300);
        var buffer = new ReceiveBuffer(1000, chunkSize: 64);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 200, data.AsSpan(200, 100), fin: true));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 100, data.AsSpan(100, 100)));
        Assert.Equal(0, buffer.ReadableBytes);
        Assert.Equal(0, buffer.Read(new byte[10]));
        Assert.True(buffer.IsFinalSizeKnown);
        Assert.False(buffer.IsAllDataReceived);
        Assert.Equal(1, buffer.FragmentCount); // [100,300) merged into one range
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, data.AsSpan(0, 100)));
        Assert.True(buffer.IsAllDataReceived);
        Assert.Equal(300, buffer.ReadableBytes);
        Assert.Equal(data, ReadAll(buffer));
        Assert.True(buffer.IsFinished);
    }

    [Fact]
    public void OverlappingAndDuplicateDataKeepsTheFirstCopy()
    {
        var buffer = new ReceiveBuffer(1000, chunkSize: 16);
        byte[] a = Enumerable.Repeat((byte)0xAA, 20).ToArray();
        byte[] b = Enumerable.Repeat((byte)0xBB, 40).ToArray();
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 10, a)); // [10,30) = AA
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, b)); // [0,40) fills only the gaps with BB
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, b)); // exact duplicate: ignored
        Assert.Equal(40, buffer.BufferedBytes);
        byte[] read = ReadAll(buffer);
        Assert.Equal(40, read.Length);
        for (int i = 0; i < 40; i++)
        {
            Assert.Equal(i >= 10 && i < 30 ? 0xAA : 0xBB, read[i]);
        }

        // Data entirely below the read offset is ignored.
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 5, a));
        Assert.Equal(0, buffer.ReadableBytes);
        Assert.Equal(40, buffer.ReadOffset);
    }

    [Fact]
    public void FinalSizeChangedIsFinalSizeError()
    {
        var buffer = new ReceiveBuffer(1000);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, new byte[10], fin: true));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, new byte[10], fin: true)); // same final size again: fine
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 10, default, fin: true));
        Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, 0, new byte[11], fin: true));
        Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, 0, new byte[9], fin: true));
        Assert.Equal(10, buffer.FinalSize);
    }

    [Fact]
    public void DataBeyondFinalSizeIsFinalSizeError()
    {
        var buffer = new ReceiveBuffer(1000);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 50, default, fin: true));
        Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, 45, new byte[6]));
        Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, 51, default));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 45, new byte[5]));
        Assert.Equal(0, buffer.ReadableBytes);
    }

    [Fact]
    public void FinalSizeBelowReceivedDataIsFinalSizeError()
    {
        var buffer = new ReceiveBuffer(1000);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 100, new byte[10]));
        Assert.Equal(TransportErrorCode.FinalSizeError, buffer.Insert(0, new byte[50], true, out string? reason));
        Assert.NotNull(reason);
        Assert.False(buffer.IsFinalSizeKnown);
        Assert.Equal(10, buffer.BufferedBytes); // nothing from the rejected frame was stored
    }

    [Fact]
    public void DataBeyondLimitIsFlowControlErrorAndNotStored()
    {
        var buffer = new ReceiveBuffer(limit: 100);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 90, new byte[10]));
        Assert.Equal(TransportErrorCode.FlowControlError, Insert(buffer, 95, new byte[6]));
        Assert.Equal(TransportErrorCode.FlowControlError, Insert(buffer, 101, default));
        Assert.Equal(100, buffer.HighestOffset);
        Assert.Equal(10, buffer.BufferedBytes);
        buffer.RaiseLimit(200);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 95, new byte[6]));
        buffer.RaiseLimit(50); // never lowers
        Assert.Equal(200, buffer.Limit);
    }

    [Fact]
    public void OffsetBeyondTwoToThe62IsRejected()
    {
        var buffer = new ReceiveBuffer(limit: StreamId.MaxValue);
        Assert.Equal(TransportErrorCode.FlowControlError, Insert(buffer, StreamId.MaxValue - 1, new byte[2]));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, StreamId.MaxValue, default));
    }

    [Fact]
    public void TooManyFragmentsIsAnErrorNotUnboundedMemory()
    {
        var buffer = new ReceiveBuffer(limit: 100000, chunkSize: 1024, maxFragments: 8);
        for (int i = 0; i < 8; i++)
        {
            Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 10 + (i * 10), new byte[1]));
        }

        Assert.Equal(TransportErrorCode.InternalError, Insert(buffer, 1000, new byte[1]));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 11, new byte[9])); // merges two fragments: fine
        Assert.Equal(7, buffer.FragmentCount);
    }

    [Fact]
    public void DiscardDropsDataButKeepsCheckingFinalSize()
    {
        var buffer = new ReceiveBuffer(1000, chunkSize: 64);
        Insert(buffer, 0, new byte[500]);
        Assert.True(buffer.AllocatedBytes > 0);
        buffer.Discard();
        Assert.Equal(0, buffer.AllocatedBytes);
        Assert.Equal(500, buffer.ReadOffset);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 500, new byte[100], fin: true));
        Assert.Equal(600, buffer.ReadOffset);
        Assert.Equal(0, buffer.AllocatedBytes);
        Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, 600, new byte[1]));
        Assert.True(buffer.IsAllDataReceived);
    }

    /// <summary>
    /// Random segments of a known byte string — reordered, duplicated, overlapping — against a flow-control window
    /// that slides as the reader consumes: reassembly is byte-exact and stored memory stays within the window.
    /// </summary>
    [Fact]
    public void RandomizedReassemblyMatchesModelAndStaysBounded()
    {
        var random = new Random(42);
        for (int round = 0; round < 300; round++)
        {
            int length = random.Next(0, 20000);
            int window = random.Next(64, 4096);
            int chunk = 16 << random.Next(0, 6);
            byte[] data = new byte[length];
            random.NextBytes(data);
            var buffer = new ReceiveBuffer(window, chunk);
            var output = new List<byte>(length);
            var readBuffer = new byte[random.Next(1, 3000)];
            int guard = 0;
            while (!buffer.IsFinished)
            {
                Assert.True(++guard < 200000);
                // A sender that respects the limit sends some segment inside [0, limit), possibly old, possibly with FIN.
                long limit = Math.Min(buffer.Limit, length);
                long start = random.Next(0, (int)limit + 1);
                if (random.Next(4) == 0)
                {
                    start = Math.Max(0, buffer.ReadOffset - random.Next(0, 200));
                }

                int len = (int)Math.Min(random.Next(0, 1500), limit - start);
                bool fin = start + len == length && random.Next(2) == 0;
                Assert.Equal(TransportErrorCode.NoError, Insert(buffer, start, data.AsSpan((int)start, len), fin));

                Assert.True(buffer.BufferedBytes <= buffer.Limit - buffer.ReadOffset);
                Assert.True(buffer.AllocatedBytes <= window + (2L * chunk), $"allocated {buffer.AllocatedBytes} window {window}");

                if (random.Next(3) == 0)
                {
                    int n = buffer.Read(readBuffer.AsSpan(0, random.Next(0, readBuffer.Length + 1)));
                    output.AddRange(readBuffer.AsSpan(0, n).ToArray());
                    buffer.RaiseLimit(buffer.ReadOffset + window);
                }

                if (start + len == length && !fin && random.Next(3) == 0)
                {
                    Assert.Equal(TransportErrorCode.NoError, Insert(buffer, length, default, fin: true));
                }
            }

            Assert.Equal(data, output.ToArray());
            Assert.Equal(0, buffer.AllocatedBytes);
            Assert.Equal(TransportErrorCode.FinalSizeError, Insert(buffer, length, new byte[1]));
        }
    }
    [Fact]
    public void WholeChunksAreTakenWithoutACopyOnlyOnceAllTheirBytesArrived()
    {
        const int size = StreamChunkBuffer.DefaultChunkSize;
        var budget = new ConnectionBufferBudget();
        var buffer = new ReceiveBuffer(1 << 20, budget: budget);
        byte[] data = Pattern(3 * size + 100);
        // The first chunk and a half, then the third chunk ahead of a gap.
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, data.AsSpan(0, size + size / 2)));
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 2 * size, data.AsSpan(2 * size, size)));
        long held = budget.ChunkBytes;

        Assert.True(buffer.TryTakeChunk(out byte[]? first, out int start, out int length));
        Assert.Equal(0, start);
        Assert.Equal(size, length);
        Assert.True(first!.AsSpan(0, size).SequenceEqual(data.AsSpan(0, size)));
        Assert.Equal(size, buffer.ReadOffset);
        Assert.Equal(held - size, budget.ChunkBytes); // the taken chunk is no longer the connection's
        // The second chunk is half there: not taken; a read copies its bytes instead.
        Assert.False(buffer.TryTakeChunk(out _, out _, out _));
        var some = new byte[100];
        Assert.Equal(100, buffer.Read(some));
        Assert.True(some.AsSpan().SequenceEqual(data.AsSpan(size, 100)));

        // The gap fills: the rest of the second chunk is taken from where the read stopped, then the third.
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, size + size / 2, data.AsSpan(size + size / 2, size / 2)));
        Assert.True(buffer.TryTakeChunk(out byte[]? second, out start, out length));
        Assert.Equal(100, start);
        Assert.Equal(size - 100, length);
        Assert.True(second!.AsSpan(start, length).SequenceEqual(data.AsSpan(size + 100, size - 100)));
        Assert.True(buffer.TryTakeChunk(out byte[]? third, out start, out length));
        Assert.Equal((0, size), (start, length));
        Assert.True(third!.AsSpan(0, size).SequenceEqual(data.AsSpan(2 * size, size)));
        Assert.False(buffer.TryTakeChunk(out _, out _, out _)); // nothing readable
        Assert.Equal(0, budget.ChunkBytes);

        // The last bytes and the FIN: a partial chunk is read, and the stream is finished.
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 3 * size, data.AsSpan(3 * size), fin: true));
        Assert.False(buffer.TryTakeChunk(out _, out _, out _));
        Assert.Equal(100, buffer.Read(some));
        Assert.True(some.AsSpan().SequenceEqual(data.AsSpan(3 * size)));
        Assert.True(buffer.IsFinished);
        Assert.Equal(0, buffer.AllocatedBytes);
    }

    [Fact]
    public void AChunkEndingAtTheFinalSizeIsTakenAndFinishesTheStream()
    {
        const int size = StreamChunkBuffer.DefaultChunkSize;
        var buffer = new ReceiveBuffer(1 << 20);
        byte[] data = Pattern(2 * size);
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, data, fin: true));
        Assert.True(buffer.TryTakeChunk(out _, out _, out _));
        Assert.True(buffer.TryTakeChunk(out byte[]? last, out int start, out int length));
        Assert.Equal((0, size), (start, length));
        Assert.True(last!.AsSpan().SequenceEqual(data.AsSpan(size)));
        Assert.True(buffer.IsFinished);
        Assert.Equal(0, buffer.AllocatedBytes);
        // Data arriving again (a retransmission) below the read offset is ignored: nothing is written into the taken chunks.
        Assert.Equal(TransportErrorCode.NoError, Insert(buffer, 0, new byte[size]));
        Assert.True(last.AsSpan().SequenceEqual(data.AsSpan(size)));
        Assert.Equal(0, buffer.AllocatedBytes);
    }
}
