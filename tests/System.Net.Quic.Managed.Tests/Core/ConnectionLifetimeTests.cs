using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionLifetimeTests(ITestOutputHelper output)
{
    /// <summary>
    /// RFC 9000 §10.1: both sides use the smaller max_idle_timeout (2 s here, the server offered 5 s) and close silently
    /// with IdleTimeout that long after their last activity, never later than 3 PTOs beyond it.
    /// </summary>
    [Fact]
    public void BothSidesCloseAtTheNegotiatedIdleTimeout()
    {
        using var pair = new QuicPair(seed: 600, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 2_000_000, Streams = QuicPair.DefaultStreams };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", IdleTimeoutUs = 5_000_000, Streams = QuicPair.DefaultStreams };
        });
        long lastDatagramToClient = 0, lastDatagramToServer = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.To.Host == QuicPair.ClientHost) lastDatagramToClient = d.NowUs + 10_000;
            else lastDatagramToServer = d.NowUs + 10_000;
            return InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        long clientClosedUs = -1, serverClosedUs = -1;
        pair.RunUntil(() =>
        {
            if (clientClosedUs < 0 && client.Phase != ConnectionPhase.Open) clientClosedUs = pair.Network.NowUs;
            if (serverClosedUs < 0 && server.Phase != ConnectionPhase.Open) serverClosedUs = pair.Network.NowUs;
            return clientClosedUs >= 0 && serverClosedUs >= 0;
        }, 20_000_000);
        long pto = Math.Max(client.Recovery.PtoDurationUs, server.Recovery.PtoDurationUs);
        output.WriteLine($"client closed {clientClosedUs - lastDatagramToClient} us after its last receipt, server {serverClosedUs - lastDatagramToServer} us; PTO {pto} us");
        Assert.Equal(ConnectionErrorSource.IdleTimeout, client.Error!.Source);
        Assert.Equal(ConnectionErrorSource.IdleTimeout, server.Error!.Source);
        Assert.InRange(clientClosedUs - lastDatagramToClient, 2_000_000 - 30_000, 2_000_000 + 3 * pto);
        Assert.InRange(serverClosedUs - lastDatagramToServer, 2_000_000 - 30_000, 2_000_000 + 3 * pto);
        // Silently closed: both endpoints forget the connections.
        pair.RunUntil(() => false, 100_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
        Assert.Empty(pair.ServerEndpoint.Connections);
        Assert.Equal(0, pair.ServerEndpoint.RouteCount);
    }

    /// <summary>KeepAliveIntervalUs below the idle timeout keeps an otherwise silent connection open (RFC 9000 §10.1.2).</summary>
    [Fact]
    public void KeepAlivePreventsTheIdleTimeout()
    {
        using var pair = new QuicPair(seed: 601, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 2_000_000, KeepAliveIntervalUs = 700_000, Streams = QuicPair.DefaultStreams };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        long sentBefore = client.Statistics.PacketsSent;
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open || server.Phase != ConnectionPhase.Open, 20_000_000);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
        Assert.Equal(ConnectionPhase.Open, server.Phase);
        long pings = client.Statistics.PacketsSent - sentBefore;
        output.WriteLine($"{pings} client packets in 20 s of silence");
        Assert.InRange(pings, 20, 60); // one PING per 0.7 s, and nothing like a busy loop
    }

    /// <summary>
    /// RFC 9000 §10.3: the server restarts and loses all state, but keeps its static reset key; the client's next 1-RTT
    /// packet draws a stateless reset, which the client recognises by the token and drains.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ServerThatLostTheConnectionResetsItStatelessly(bool rotateFirst)
    {
        using var pair = new QuicPair(seed: 602, configure: p => p.ServerResetKey = Enumerable.Range(1, 32).Select(i => (byte)i).ToArray());
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed, 1_000_000);
        if (rotateFirst)
        {
            // Move the client to another of the server's IDs: the token then comes from NEW_CONNECTION_ID, not from the
            // stateless_reset_token transport parameter.
            pair.RunUntil(() => client.PeerConnectionIdCount > 1, 1_000_000);
            Assert.True(client.MigrateLocalAddress(pair.Network.NowUs));
        }
        pair.RunUntil(() => false, 100_000);

        pair.RestartServer();
        long restartUs = pair.Network.NowUs;
        Assert.True(client.TryOpenStream(false, out long id));
        client.WriteStream(id, new byte[500], fin: true);
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 2_000_000);
        output.WriteLine($"client drained {pair.Network.NowUs - restartUs} us after the restart");
        Assert.InRange(pair.Network.NowUs - restartUs, 20_000, 40_000); // the first reset, one round trip later
        Assert.Equal(1, pair.ServerEndpoint.StatelessResetsSent);
        Assert.NotNull(client.Error);
        Assert.Equal(ConnectionErrorSource.StatelessReset, client.Error!.Source);
        Assert.Equal(ConnectionPhase.Draining, client.Phase);
        long resetsBefore = pair.ServerEndpoint.StatelessResetsSent;
        pair.RunUntil(() => pair.ClientEndpoint.Connections.Count == 0, 5_000_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
        Assert.Equal(resetsBefore, pair.ServerEndpoint.StatelessResetsSent); // a draining client sends nothing more
    }

    /// <summary>A server with a different reset key produces tokens the client does not accept: no reset, the client times out instead.</summary>
    [Fact]
    public void StatelessResetWithAnotherKeyIsIgnored()
    {
        using var pair = new QuicPair(seed: 603, configure: p =>
        {
            p.ServerResetKey = Enumerable.Range(1, 32).Select(i => (byte)i).ToArray();
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 1_000_000, Streams = QuicPair.DefaultStreams };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed, 1_000_000);
        pair.ServerResetKey = Enumerable.Range(2, 32).Select(i => (byte)i).ToArray();
        pair.RestartServer();
        Assert.True(client.TryOpenStream(false, out long id));
        client.WriteStream(id, new byte[500], fin: true);
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 5_000_000);
        Assert.True(pair.ServerEndpoint.StatelessResetsSent > 0);
        Assert.Equal(ConnectionErrorSource.IdleTimeout, client.Error!.Source);
    }
}
