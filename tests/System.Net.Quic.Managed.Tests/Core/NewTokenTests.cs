using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

public class NewTokenTests
{
    /// <summary>
    /// RFC 9000 §8.1.3: the server gives the client a NEW_TOKEN token; a later connection that presents it is validated
    /// without a Retry round trip, even on a server that otherwise requires Retry.
    /// </summary>
    [Fact]
    public void TokenFromNewTokenSkipsRetryOnTheNextConnection()
    {
        using var pair = new QuicPair(seed: 70, new LinkConditions { DelayUs = 10_000 }, configure: p => p.RequireRetry = true);
        Assert.True(pair.Handshake());
        Assert.Equal(1, pair.ServerEndpoint.RetriesSent);
        pair.RunUntil(() => pair.ClientConnection!.ReceivedToken is not null, 2_000_000);
        byte[] token = Assert.IsType<byte[]>(pair.ClientConnection!.ReceivedToken);
        Assert.True(pair.ServerConnection!.NewTokenIssued);

        var options = new ConnectionOptions { Random = new System.Net.Quic.Managed.Crypto.SeededRandomSource(71), InitialToken = token, MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams };
        Connection second = pair.ClientEndpoint.Connect(options, new FakeCryptoHandshake(false), SimulatedQuicEndpoint.ToNetwork(pair.ServerAddress), pair.Network.NowUs);
        long start = pair.Network.NowUs;
        pair.Network.PollAll();
        pair.RunUntil(() => second.IsHandshakeComplete, 5_000_000);
        Assert.True(second.IsHandshakeComplete);
        Assert.Equal(1, pair.ServerEndpoint.RetriesSent); // no second Retry
        Assert.Equal(1, pair.ServerEndpoint.NewTokensAccepted);
        Assert.InRange(pair.Network.NowUs - start, 20_000, 40_000); // one round trip (20 ms) plus processing, not two
    }

    [Fact]
    public void ForgedOrForeignTokenStillGetsARetry()
    {
        using var pair = new QuicPair(seed: 72, new LinkConditions { DelayUs = 10_000 }, configure: p => p.RequireRetry = true);
        var options = new ConnectionOptions { Random = new System.Net.Quic.Managed.Crypto.SeededRandomSource(73), InitialToken = new byte[60], MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams };
        Connection client = pair.ClientEndpoint.Connect(options, new FakeCryptoHandshake(false), SimulatedQuicEndpoint.ToNetwork(pair.ServerAddress), pair.Network.NowUs);
        pair.Network.PollAll();
        pair.RunUntil(() => client.IsHandshakeComplete, 5_000_000);
        Assert.True(client.IsHandshakeComplete);
        Assert.Equal(1, pair.ServerEndpoint.RetriesSent);
        Assert.Equal(0, pair.ServerEndpoint.NewTokensAccepted);
    }
}
