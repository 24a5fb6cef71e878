using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

public class StreamIdTests
{
    // RFC 9000 §2.1 Table 1: 0x00 client bidi, 0x01 server bidi, 0x02 client uni, 0x03 server uni.
    [Theory]
    [InlineData(0L, false, false)]
    [InlineData(1L, true, false)]
    [InlineData(2L, false, true)]
    [InlineData(3L, true, true)]
    [InlineData(4L, false, false)]
    [InlineData(15L, true, true)]
    public void TypeBits(long id, bool server, bool uni)
    {
        Assert.Equal(server, StreamId.IsServerInitiated(id));
        Assert.Equal(!server, StreamId.IsClientInitiated(id));
        Assert.Equal(uni, StreamId.IsUnidirectional(id));
        Assert.Equal(!uni, StreamId.IsBidirectional(id));
        Assert.Equal((int)(id & 3), StreamId.Type(id));
        Assert.Equal(id >> 2, StreamId.Index(id));
        Assert.Equal(id, StreamId.Make(StreamId.Index(id), server, uni));
    }

    [Fact]
    public void MakeAndIndex()
    {
        Assert.Equal(0L, StreamId.Make(0, false, false));
        Assert.Equal(1L, StreamId.Make(0, true, false));
        Assert.Equal(2L, StreamId.Make(0, false, true));
        Assert.Equal(3L, StreamId.Make(0, true, true));
        Assert.Equal(8L, StreamId.Make(2, false, false));
        Assert.Equal(11L, StreamId.Make(2, true, true));
        Assert.Equal(StreamId.MaxValue, StreamId.Make(StreamId.MaxStreamCount - 1, true, true));
        Assert.Throws<ArgumentOutOfRangeException>(() => StreamId.Make(StreamId.MaxStreamCount, false, false));
        Assert.Throws<ArgumentOutOfRangeException>(() => StreamId.Make(-1, false, false));
        Assert.Equal(3L, StreamId.CountNeeded(8));
    }

    [Fact]
    public void LocalityAndDirection()
    {
        // Client: 0 (own bidi), 2 (own uni), 1 (peer bidi), 3 (peer uni).
        Assert.True(StreamId.IsLocal(0, isServer: false));
        Assert.False(StreamId.IsLocal(0, isServer: true));
        Assert.True(StreamId.IsLocal(3, isServer: true));
        Assert.True(StreamId.CanSend(2, isServer: false));
        Assert.False(StreamId.CanReceive(2, isServer: false));
        Assert.False(StreamId.CanSend(2, isServer: true));
        Assert.True(StreamId.CanReceive(2, isServer: true));
        Assert.True(StreamId.CanSend(1, isServer: false) && StreamId.CanReceive(1, isServer: false));
    }

    [Fact]
    public void Validity()
    {
        Assert.Equal((1L << 62) - 1, StreamId.MaxValue);
        Assert.Equal(1L << 60, StreamId.MaxStreamCount);
        Assert.True(StreamId.IsValid(0));
        Assert.True(StreamId.IsValid(StreamId.MaxValue));
        Assert.False(StreamId.IsValid(StreamId.MaxValue + 1));
        Assert.False(StreamId.IsValid(-1));
    }
}
