using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

public class SentFramesPoolTests
{
    [Fact]
    public void RecordsAreReusedAndCleared()
    {
        var pool = new SentFramesPool();
        SentFrames a = pool.Rent();
        int visit = -1;
        for (int i = 0; i < 20; i++) a.AddStreamRange(ref visit, 4, i * 100, 100, i == 19);
        a.Retransmits.MaxData = 1000;
        a.Retransmits.NewConnectionIds.Add(3);
        Assert.Equal(1, a.Streams.Count);
        Assert.Equal(20, a.Streams[0].RangeCount);
        Assert.True(a.StreamRanges[19].Fin);
        Assert.False(a.IsEmpty);
        pool.Return(a);
        SentFrames b = pool.Rent();
        Assert.Same(a, b);
        Assert.True(b.IsEmpty);
        Assert.Equal(0, b.StreamRanges.Count);
        Assert.Null(b.Retransmits.MaxData);
    }

    [Fact]
    public void StreamVisitsKeepTheirOwnRanges()
    {
        var frames = new SentFrames();
        int first = -1, second = -1;
        frames.StreamVisit(ref first, 4).MaxStreamData = 500;
        frames.AddStreamRange(ref first, 4, 0, 10, fin: false);
        frames.AddStreamRange(ref second, 8, 0, 20, fin: true);
        Assert.Equal(2, frames.Streams.Count);
        Assert.Equal((0, 1), (frames.Streams[0].FirstRange, frames.Streams[0].RangeCount));
        Assert.Equal((1, 1), (frames.Streams[1].FirstRange, frames.Streams[1].RangeCount));
        Assert.Equal(500, frames.Streams[0].MaxStreamData);
    }

    [Fact]
    public void FrameTypesFollowTheWriteOrder()
    {
        var frames = new SentFrames { LargestAcknowledged = 7, Ping = true };
        frames.Retransmits.HandshakeDone = true;
        frames.Crypto.Add(new SentCryptoRange(0, 100));
        int visit = -1;
        frames.StreamVisit(ref visit, 0).ResetStream = true;
        frames.AddStreamRange(ref visit, 0, 0, 5, fin: false);
        Span<ulong> types = stackalloc ulong[8];
        int count = frames.GetFrameTypes(types);
        Assert.Equal(new[] { (ulong)FrameType.Ack, (ulong)FrameType.HandshakeDone, (ulong)FrameType.Crypto, (ulong)FrameType.ResetStream, (ulong)FrameType.Stream, (ulong)FrameType.Ping },
            types.Slice(0, count).ToArray());
        Assert.Equal(3, frames.GetFrameTypes(types.Slice(0, 3)));
    }

    [Fact]
    public void RetainsAtMostTheConfiguredNumber()
    {
        var pool = new SentFramesPool(maxRetained: 2);
        var records = Enumerable.Range(0, 5).Select(_ => pool.Rent()).ToList();
        foreach (SentFrames r in records) pool.Return(r);
        Assert.Equal(2, pool.Retained);
    }
}
