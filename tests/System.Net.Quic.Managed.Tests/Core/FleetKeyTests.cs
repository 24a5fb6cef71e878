using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Tests.Ids;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Fleet keys: servers behind one load balancer that share the address validation token key accept each
/// other's Retry tokens (RFC 9000 §8.1.3), and servers that share the static reset key send valid stateless resets for
/// each other's connections (§10.3.2). "Another server of the fleet" is a new server endpoint at the same address, with
/// another QUIC-LB server ID, taking over from the first (which is what a balancer does when a server goes away).
/// </summary>
public class FleetKeyTests(ITestOutputHelper output)
{
    private static readonly byte[] s_tokenKey = Enumerable.Range(100, 32).Select(i => (byte)i).ToArray();
    private static readonly byte[] s_resetKey = Enumerable.Range(1, 32).Select(i => (byte)i).ToArray();
    private static readonly byte[] s_lbKey = Enumerable.Range(7, 16).Select(i => (byte)i).ToArray();

    private static QuicLbConnectionIdGenerator Server(byte id) => new(0, [id, 0x5a], 6, s_lbKey, encodeLength: false);

    /// <summary>Server A answers with a Retry; the client's second Initial, with A's token, reaches server B.</summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void RetryTokenMintedByOneServerIsAcceptedByAnother(bool sharedKey)
    {
        using QuicLbConnectionIdGenerator a = Server(1), b = Server(2);
        using var pair = new QuicPair(seed: 1702, configure: p =>
        {
            p.RequireRetry = true;
            p.ServerTokenKey = s_tokenKey;
            p.ServerConnectionIdGenerator = a;
        });
        Connection client = pair.Connect();
        pair.RunUntil(() => client.Retried, 1_000_000);
        Assert.True(client.Retried);
        Assert.Equal(1, pair.ServerEndpoint.RetriesSent);

        pair.ServerTokenKey = sharedKey ? s_tokenKey : Enumerable.Range(1, 32).Select(i => (byte)(i * 3)).ToArray();
        pair.ServerConnectionIdGenerator = b;
        pair.RestartServer(); // the balancer sends the client's next Initial to server B
        pair.RunUntil(() => client.IsHandshakeComplete, 2_000_000);

        if (sharedKey)
        {
            Assert.True(client.IsHandshakeComplete);
            Assert.Equal(0, pair.ServerEndpoint.RetriesSent); // B took A's token: no second Retry
            Assert.True(pair.ServerConnection!.Retried);     // and echoes A's Retry SCID (§7.3), which the client checked
            using var decoder = new QuicLbDecoder(0, 2, 6, s_lbKey);
            Assert.Equal(new byte[] { 2, 0x5a }, decoder.DecodeServerId(pair.ServerConnection.InitialSourceId.Span));
        }
        else
        {
            Assert.False(client.IsHandshakeComplete);
            // B cannot open the token: it creates nothing and retries again, and a client takes one Retry only (§17.2.5.2).
            Assert.Empty(pair.ServerEndpoint.Connections);
            Assert.True(pair.ServerEndpoint.RetriesSent > 0);
        }
    }

    /// <summary>
    /// The client's server goes away and the balancer sends its packets to another server of the fleet, which has no
    /// connection for the ID: with the fleet's reset key its stateless reset carries the right token and the client closes
    /// one round trip later, instead of after its idle timeout.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void StatelessResetFromAServerThatDoesNotOwnTheConnection(bool sharedKey)
    {
        using QuicLbConnectionIdGenerator a = Server(1), b = Server(2);
        using var pair = new QuicPair(seed: 1703, configure: p =>
        {
            p.ServerResetKey = s_resetKey;
            p.ServerConnectionIdGenerator = a;
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 3_000_000, Streams = QuicPair.DefaultStreams };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed, 1_000_000);

        pair.ServerResetKey = sharedKey ? s_resetKey : Enumerable.Range(50, 32).Select(i => (byte)i).ToArray();
        pair.ServerConnectionIdGenerator = b;
        pair.RestartServer();
        long start = pair.Network.NowUs;
        Assert.True(client.TryOpenStream(false, out long id));
        client.WriteStream(id, new byte[500], fin: true);
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 5_000_000);
        long elapsed = pair.Network.NowUs - start;
        output.WriteLine($"client left Open after {elapsed} us ({client.Error?.Source})");
        Assert.True(pair.ServerEndpoint.StatelessResetsSent > 0);
        if (sharedKey)
        {
            Assert.Equal(ConnectionErrorSource.StatelessReset, client.Error!.Source);
            Assert.InRange(elapsed, 20_000, 40_000); // one round trip of the 10 ms links
        }
        else
        {
            Assert.Equal(ConnectionErrorSource.IdleTimeout, client.Error!.Source);
        }
    }
}
