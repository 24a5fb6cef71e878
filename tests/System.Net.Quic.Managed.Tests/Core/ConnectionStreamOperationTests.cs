using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionStreamOperationTests
{
    /// <summary>Regression (found through the public API): a write after the peer's STOP_SENDING threw on the driver thread.</summary>
    [Fact]
    public void WriteAfterPeerStopSendingReturnsZeroInsteadOfThrowing()
    {
        using var pair = new QuicPair(seed: 50);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        Assert.Equal(5, client.WriteStream(id, "hello"u8, fin: false));
        pair.Network.PollAll();
        pair.RunUntil(() => server.Streams.TryGetStream(id, out _), 1_000_000);
        server.StopSending(id, 77);
        pair.Network.PollAll();
        pair.RunUntil(() => client.GetStopSendingCode(id) is not null, 1_000_000);
        Assert.Equal(77UL, client.GetStopSendingCode(id));
        Assert.Equal(0, client.WriteStream(id, "more"u8, fin: false));
        Assert.Equal(0, client.WriteStream(id, default, fin: true));
    }

    [Fact]
    public void WriteAfterFinIsNotAccepted()
    {
        using var pair = new QuicPair(seed: 51);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        Assert.True(client.TryOpenStream(unidirectional: true, out long id));
        Assert.Equal(3, client.WriteStream(id, "abc"u8, fin: true));
        Assert.Equal(0, client.WriteStream(id, "d"u8, fin: false));
    }
}
