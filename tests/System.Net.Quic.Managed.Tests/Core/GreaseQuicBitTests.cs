using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>grease_quic_bit (RFC 9287) on the simulated network: advertised, greased only towards a peer that advertised it, accepted only when we advertised it.</summary>
public class GreaseQuicBitTests
{
    private static ConnectionOptions Options(int seed, string name, bool grease) => new()
    {
        Random = new SeededRandomSource(seed),
        Name = name,
        MaxDatagramSize = 1452,
        Streams = QuicPair.DefaultStreams,
        GreaseQuicBit = grease,
    };

    private static QuicPair Pair(int seed, bool clientGrease, bool serverGrease) => new(seed, configure: p =>
    {
        p.ClientOptions = Options(seed * 2 + 1, "client", clientGrease);
        p.ServerOptions = Options(seed * 2 + 2, "server", serverGrease);
    });

    /// <summary>Counts, per sender, datagrams whose first packet is Initial / Handshake or 1-RTT, with the Fixed Bit cleared or set.</summary>
    private sealed class FixedBitCounts
    {
        public int ClientGreased, ClientSet, ServerGreased, ServerSet, InitialGreased;

        public InterceptAction Observe(InterceptedDatagram d)
        {
            byte first = d.Data[0];
            bool isLong = (first & 0x80) != 0;
            bool initial = isLong && ((first >> 4) & 3) == 0;
            bool greased = (first & 0x40) == 0;
            if (initial)
            {
                if (greased) InitialGreased++;
                return InterceptAction.Pass;
            }
            bool fromClient = d.From.Host == QuicPair.ClientHost;
            if (fromClient && greased) ClientGreased++;
            else if (fromClient) ClientSet++;
            else if (greased) ServerGreased++;
            else ServerSet++;
            return InterceptAction.Pass;
        }
    }

    [Fact]
    public void BothAdvertiseAndBothGreaseWhileATransferCompletes()
    {
        using QuicPair pair = Pair(1, clientGrease: true, serverGrease: true);
        var counts = new FixedBitCounts();
        pair.Network.Interceptor = counts.Observe;
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.True(client.PeerParameters!.GreaseQuicBit);
        Assert.True(server.PeerParameters!.GreaseQuicBit);

        var upload = new StreamTransfer(pair, client, server, 200_000);
        var download = new StreamTransfer(pair, server, client, 200_000);
        pair.RunUntil(() =>
        {
            upload.Step();
            download.Step();
            pair.Network.PollAll();
            return upload.Done && download.Done;
        }, 20_000_000);
        Assert.True(upload.ReceivedFin && !upload.Corrupted);
        Assert.True(download.ReceivedFin && !download.Corrupted);

        // About half of each side's Handshake and 1-RTT packets go with the bit cleared (unpredictable, §3.1); Initials never.
        Assert.Equal(0, counts.InitialGreased);
        Assert.True(counts.ClientGreased > 10 && counts.ClientSet > 10, $"client: {counts.ClientGreased} greased, {counts.ClientSet} set");
        Assert.True(counts.ServerGreased > 10 && counts.ServerSet > 10, $"server: {counts.ServerGreased} greased, {counts.ServerSet} set");
        Assert.Equal(0, client.Statistics.PacketsDropped);
        Assert.Equal(0, server.Statistics.PacketsDropped);
    }

    [Fact]
    public void NoGreasingTowardsAPeerThatDidNotAdvertise()
    {
        using QuicPair pair = Pair(2, clientGrease: false, serverGrease: true);
        var counts = new FixedBitCounts();
        pair.Network.Interceptor = counts.Observe;
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.False(server.PeerParameters!.GreaseQuicBit);
        Assert.True(client.PeerParameters!.GreaseQuicBit);
        var download = new StreamTransfer(pair, server, client, 100_000);
        pair.RunUntil(() =>
        {
            download.Step();
            pair.Network.PollAll();
            return download.Done;
        }, 20_000_000);
        Assert.True(download.ReceivedFin && !download.Corrupted);
        // The server must keep the bit set towards the client; the client greases towards the server, which advertised.
        Assert.Equal(0, counts.ServerGreased);
        Assert.Equal(0, server.GreasedPacketsSent);
        Assert.True(counts.ClientGreased > 0, $"client greased {counts.ClientGreased} of {counts.ClientGreased + counts.ClientSet}");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ClearedFixedBitIsAcceptedOnlyWhenAdvertised(bool clientAdvertises)
    {
        // The server does not grease (the client's parameter is what allows that); the link clears the bit of every
        // 1-RTT datagram towards the client instead, as a greasing peer would.
        using QuicPair pair = Pair(3, clientGrease: clientAdvertises, serverGrease: false);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        int cleared = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.To.Host == QuicPair.ClientHost && (d.Data[0] & 0x80) == 0)
            {
                d.Data[0] &= 0xbf;
                cleared++;
            }
            return InterceptAction.Pass;
        };
        Assert.True(client.TryOpenStream(false, out long id));
        client.WriteStream(id, new byte[100], fin: true);
        pair.Network.PollAll();
        byte[] buffer = new byte[200];
        bool echoed = false;
        pair.RunUntil(() =>
        {
            while (server.TryDequeueEvent(out _)) { }
            while (client.TryDequeueEvent(out _)) { }
            if (server.Streams.TryGetStream(id, out _) && server.ReadStream(id, buffer, out bool fin, out _, out _) >= 0 && fin)
            {
                server.WriteStream(id, new byte[100], fin: true);
                pair.Network.PollAll();
            }
            client.ReadStream(id, buffer, out bool clientFin, out _, out _);
            echoed |= clientFin;
            return echoed;
        }, 3_000_000);
        Assert.True(cleared > 0);
        // RFC 9287 §3: an endpoint that advertised grease_quic_bit MUST accept such packets; one that did not drops them
        // (RFC 9000 §17.3.1: the Fixed Bit of a valid packet is 1), so no reply gets through.
        Assert.Equal(clientAdvertises, echoed);
    }
}
