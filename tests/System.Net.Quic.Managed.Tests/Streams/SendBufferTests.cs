using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

public class SendBufferTests
{
    private static byte[] Pattern(int length, int seed = 3)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    private static (long Offset, byte[] Data, bool Fin)? Take(SendBuffer buffer, int max, long flowLimit = long.MaxValue)
    {
        var dest = new byte[max];
        if (!buffer.TryTakeNextToSend(dest, flowLimit, out long offset, out int length, out bool fin))
        {
            return null;
        }

        return (offset, dest.AsSpan(0, length).ToArray(), fin);
    }

    [Fact]
    public void AppendIsBoundedByMaxBufferedBytes()
    {
        var buffer = new SendBuffer(maxBufferedBytes: 100, chunkSize: 32);
        Assert.Equal(60, buffer.Append(new byte[60], fin: false));
        Assert.Equal(40, buffer.Append(new byte[60], fin: true)); // partial: FIN not recorded
        Assert.False(buffer.IsFinRequested);
        Assert.Equal(0, buffer.WritableBytes);
        Assert.Equal(0, buffer.Append(new byte[1], fin: false));
        Assert.True(buffer.AllocatedBytes <= 100 + 32);

        // Acknowledging the prefix frees room.
        var f = Take(buffer, 50)!.Value;
        Assert.Equal(0, f.Offset);
        buffer.OnAcked(0, 50, false);
        Assert.Equal(50, buffer.WritableBytes);
        Assert.Equal(50, buffer.Append(new byte[50], fin: true));
        Assert.True(buffer.IsFinRequested);
        Assert.Equal(150, buffer.FinalSize);
        Assert.Throws<InvalidOperationException>(() => buffer.Append(new byte[1], false));
    }

    [Fact]
    public void NewDataRespectsFlowLimitAndFinRidesOnLastByte()
    {
        byte[] data = Pattern(100);
        var buffer = new SendBuffer(1000);
        buffer.Append(data, fin: true);
        var a = Take(buffer, 1000, flowLimit: 30)!.Value;
        Assert.Equal((0L, 30, false), (a.Offset, a.Data.Length, a.Fin));
        Assert.Equal(data.AsSpan(0, 30).ToArray(), a.Data);
        Assert.Null(Take(buffer, 1000, flowLimit: 30)); // blocked at the limit
        Assert.True(buffer.HasNewData);
        var b = Take(buffer, 1000, flowLimit: 1000)!.Value;
        Assert.Equal((30L, 70, true), (b.Offset, b.Data.Length, b.Fin));
        Assert.Equal(data.AsSpan(30).ToArray(), b.Data);
        Assert.False(buffer.HasNewData);
        Assert.Null(Take(buffer, 1000));
        Assert.Equal(100, buffer.MaxSentOffset);
    }

    [Fact]
    public void FinOnlyFrameWhenFinishedAfterDataSent()
    {
        var buffer = new SendBuffer(1000);
        buffer.Append(new byte[10], fin: false);
        Assert.Equal(10, Take(buffer, 100)!.Value.Data.Length);
        buffer.Append(default, fin: true);
        Assert.True(buffer.TryPeekNextToSend(long.MaxValue, out long off, out long len, out bool fin));
        Assert.Equal((10L, 0L, true), (off, len, fin));
        var f = Take(buffer, 0)!.Value; // a FIN-only frame fits an empty destination
        Assert.Equal((10L, 0, true), (f.Offset, f.Data.Length, f.Fin));
        Assert.Null(Take(buffer, 100));
    }

    [Fact]
    public void LostRangesAreRetransmittedFirstAndOnlyWhatWasLost()
    {
        byte[] data = Pattern(300);
        var buffer = new SendBuffer(1000, chunkSize: 64);
        buffer.Append(data, fin: false);
        var f1 = Take(buffer, 100)!.Value; // [0,100)
        var f2 = Take(buffer, 100)!.Value; // [100,200)
        Assert.Equal(100, f2.Offset);
        buffer.OnAcked(120, 30, false); // part of f2 acked by another copy, say
        buffer.OnLost(100, 100, false);
        Assert.Equal(2, buffer.LostRangeCount); // [100,120) and [150,200)

        var r1 = Take(buffer, 1000)!.Value;
        Assert.Equal((100L, 20), (r1.Offset, r1.Data.Length));
        Assert.Equal(data.AsSpan(100, 20).ToArray(), r1.Data);
        var r2 = Take(buffer, 10)!.Value; // partial retransmission
        Assert.Equal((150L, 10), (r2.Offset, r2.Data.Length));
        var r3 = Take(buffer, 1000)!.Value;
        Assert.Equal((160L, 40), (r3.Offset, r3.Data.Length));
        Assert.Equal(data.AsSpan(160, 40).ToArray(), r3.Data);
        var n = Take(buffer, 1000)!.Value; // then new data
        Assert.Equal((200L, 100), (n.Offset, n.Data.Length));
        Assert.Equal(f1.Data, data.AsSpan(0, 100).ToArray());
    }

    [Fact]
    public void OutOfOrderAcksFreeOnlyTheAckedPrefix()
    {
        var buffer = new SendBuffer(100000, chunkSize: 1024);
        buffer.Append(new byte[10240], fin: true);
        while (Take(buffer, 1024) is not null)
        {
        }

        Assert.Equal(10 * 1024, buffer.AllocatedBytes);
        for (int i = 9; i >= 1; i--)
        {
            buffer.OnAcked(i * 1024, 1024, i == 9);
        }

        Assert.Equal(0, buffer.AckedOffset);
        Assert.Equal(10 * 1024, buffer.AllocatedBytes); // prefix not acked yet
        Assert.Equal(1024, buffer.UnackedBytes);
        Assert.False(buffer.IsAllDataAcked);
        buffer.OnAcked(0, 1024, false);
        Assert.Equal(10240, buffer.AckedOffset);
        Assert.Equal(0, buffer.AllocatedBytes);
        Assert.Equal(0, buffer.UnackedBytes);
        Assert.True(buffer.IsAllDataAcked);
    }

    [Fact]
    public void LostFinIsRetransmittedAndAckedFinCompletes()
    {
        var buffer = new SendBuffer(1000);
        buffer.Append(new byte[10], fin: true);
        var f = Take(buffer, 100)!.Value;
        Assert.True(f.Fin);
        buffer.OnAcked(0, 10, fin: false); // data acked through another frame; FIN's frame lost
        buffer.OnLost(0, 10, fin: true);
        Assert.False(buffer.IsAllDataAcked);
        Assert.True(buffer.HasRetransmission);
        var r = Take(buffer, 100)!.Value;
        Assert.Equal((10L, 0, true), (r.Offset, r.Data.Length, r.Fin));
        Assert.False(buffer.HasRetransmission);
        buffer.OnAcked(10, 0, fin: true);
        Assert.True(buffer.IsAllDataAcked);
    }

    [Fact]
    public void LateAckOfLostDataCancelsRetransmission()
    {
        var buffer = new SendBuffer(1000);
        buffer.Append(new byte[100], fin: false);
        Take(buffer, 100);
        buffer.OnLost(0, 100, false);
        buffer.OnAcked(0, 100, false); // spurious loss
        Assert.False(buffer.HasRetransmission);
        Assert.Null(Take(buffer, 100));
    }

    [Fact]
    public void ResetDiscardsEverything()
    {
        var buffer = new SendBuffer(1000, chunkSize: 64);
        buffer.Append(new byte[500], fin: false);
        Take(buffer, 200);
        buffer.OnLost(0, 100, false);
        buffer.Reset();
        Assert.True(buffer.IsReset);
        Assert.Equal(0, buffer.AllocatedBytes);
        Assert.False(buffer.HasRetransmission);
        Assert.False(buffer.HasNewData);
        Assert.Null(Take(buffer, 100));
        Assert.Equal(200, buffer.MaxSentOffset);
        buffer.OnAcked(0, 200, false);
        buffer.OnLost(0, 200, true);
        Assert.False(buffer.HasRetransmission);
        Assert.Throws<InvalidOperationException>(() => buffer.Append(new byte[1], false));
    }

    [Fact]
    public void ZeroCopySpanVariantStaysWithinAChunk()
    {
        byte[] data = Pattern(200);
        var buffer = new SendBuffer(1000, chunkSize: 64);
        buffer.Append(data, fin: true);
        Assert.True(buffer.TryGetNextToSend(1000, long.MaxValue, out long off, out ReadOnlySpan<byte> span, out bool fin));
        Assert.Equal(0, off);
        Assert.Equal(64, span.Length);
        Assert.False(fin);
        Assert.True(data.AsSpan(0, 64).SequenceEqual(span));
        Assert.True(buffer.TryGetNextToSend(10, long.MaxValue, out off, out span, out fin));
        Assert.Equal((64L, 10), (off, span.Length));
    }

    /// <summary>
    /// Random writes, frame sizes, flow limits, acknowledgements and losses (in any order) against a model: every frame
    /// carries the right bytes, memory stays bounded, and eventually all data is acknowledged and released.
    /// </summary>
    [Fact]
    public void RandomizedSendAckLossMatchesModel()
    {
        var random = new Random(99);
        for (int round = 0; round < 200; round++)
        {
            int total = random.Next(0, 30000);
            int maxBuffered = random.Next(100, 5000);
            int chunk = 16 << random.Next(0, 6);
            byte[] data = new byte[total];
            random.NextBytes(data);
            var buffer = new SendBuffer(maxBuffered, chunk);
            var inFlight = new List<(long Off, int Len, bool Fin)>();
            var delivered = new bool[total];
            bool finDelivered = false;
            long written = 0;
            long flowLimit = random.Next(0, 2000);
            int guard = 0;
            long checkedUpTo = 0;
            while (!buffer.IsAllDataAcked)
            {
                Assert.True(++guard < 100000, "no progress");
                int action = random.Next(10);
                if (action < 3 && !buffer.IsFinRequested)
                {
                    int n = (int)Math.Min(random.Next(0, 3000), total - written);
                    int accepted = buffer.Append(data.AsSpan((int)written, n), fin: written + n == total);
                    Assert.True(accepted <= n);
                    written += accepted;
                }
                else if (action < 6)
                {
                    var dest = new byte[random.Next(0, 1500)];
                    long sentBefore = buffer.MaxSentOffset;
                    if (buffer.TryTakeNextToSend(dest, flowLimit, out long off, out int len, out bool fin))
                    {
                        Assert.True(data.AsSpan((int)off, len).SequenceEqual(dest.AsSpan(0, len)));
                        Assert.True(off + len <= Math.Max(flowLimit, sentBefore));
                        if (fin) Assert.Equal(total, off + len);
                        inFlight.Add((off, len, fin));
                    }
                }
                else if (action < 9 && inFlight.Count > 0)
                {
                    int i = random.Next(inFlight.Count);
                    var f = inFlight[i];
                    inFlight.RemoveAt(i);
                    if (random.Next(3) == 0)
                    {
                        buffer.OnLost(f.Off, f.Len, f.Fin);
                    }
                    else
                    {
                        Assert.True(buffer.OnAcked(f.Off, f.Len, f.Fin));
                        for (long b = f.Off; b < f.Off + f.Len; b++) delivered[b] = true;
                        finDelivered |= f.Fin;
                    }
                }
                else
                {
                    flowLimit += random.Next(0, 3000);
                }

                Assert.True(buffer.BufferedBytes <= maxBuffered);
                Assert.True(buffer.AllocatedBytes <= maxBuffered + (2L * chunk), $"allocated {buffer.AllocatedBytes}");
                for (; checkedUpTo < buffer.AckedOffset; checkedUpTo++) Assert.True(delivered[checkedUpTo]);
            }

            Assert.All(delivered, Assert.True);
            Assert.True(finDelivered);
            Assert.Equal(total, buffer.AckedOffset);
            Assert.Equal(0, buffer.AllocatedBytes);
        }
    }
}
