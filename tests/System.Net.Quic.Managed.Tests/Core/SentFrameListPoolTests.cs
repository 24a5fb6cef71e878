using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

public class SentFrameListPoolTests
{
    [Fact]
    public void ListsAreReusedAndCleared()
    {
        var pool = new SentFrameListPool();
        SentFrameList a = pool.Rent();
        for (int i = 0; i < 20; i++) a.Add(new SentFrame(SentFrameKind.Stream, 4, i * 100, 100, i == 19));
        Assert.Equal(20, a.Count);
        Assert.True(a.Frames[19].Flag);
        pool.Return(a);
        SentFrameList b = pool.Rent();
        Assert.Same(a, b);
        Assert.Equal(0, b.Count);
    }

    [Fact]
    public void RetainsAtMostTheConfiguredNumber()
    {
        var pool = new SentFrameListPool(maxRetained: 2);
        var lists = Enumerable.Range(0, 5).Select(_ => pool.Rent()).ToList();
        foreach (SentFrameList l in lists) pool.Return(l);
        Assert.Equal(2, pool.Retained);
    }
}
