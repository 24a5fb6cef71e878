using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Tests.Ids;

public class ConnectionIdTests
{
    [Fact]
    public void EqualityAndHashFollowTheBytes()
    {
        var a = new ConnectionId(new byte[] { 1, 2, 3, 4 });
        var b = new ConnectionId(new byte[] { 1, 2, 3, 4 });
        var c = new ConnectionId(new byte[] { 1, 2, 3 });
        Assert.Equal(a, b);
        Assert.Equal(a.GetHashCode(), b.GetHashCode());
        Assert.NotEqual(a, c);
        Assert.Equal("01020304", a.ToString());
        Assert.Equal(0, ConnectionId.Empty.Length);
        Assert.True(ConnectionId.Empty == new ConnectionId(ReadOnlySpan<byte>.Empty));
    }

    [Fact]
    public void RejectsMoreThanTwentyBytes()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new ConnectionId(new byte[21]));
        Assert.Equal(20, new ConnectionId(new byte[20]).Length);
    }

    [Fact]
    public void CreateUsesTheRandomSource()
    {
        ConnectionId x = ConnectionId.Create(new SeededRandomSource(7), 8);
        ConnectionId y = ConnectionId.Create(new SeededRandomSource(7), 8);
        ConnectionId z = ConnectionId.Create(new SeededRandomSource(8), 8);
        Assert.Equal(8, x.Length);
        Assert.Equal(x, y);
        Assert.NotEqual(x, z);
    }

    [Fact]
    public void WorksAsDictionaryKey()
    {
        var map = new Dictionary<ConnectionId, int>();
        for (int i = 0; i < 100; i++) map[new ConnectionId(BitConverter.GetBytes((long)i))] = i;
        Assert.Equal(57, map[new ConnectionId(BitConverter.GetBytes(57L))]);
    }
}
