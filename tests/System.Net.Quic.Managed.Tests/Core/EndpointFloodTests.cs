using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// A server endpoint under a flood of client Initials (sans-IO, virtual time): forgeries that do not authenticate create
/// nothing and reach no factory; authentic Initials from many addresses are bounded by Retry; real clients are served
/// right after either flood.
/// </summary>
public class EndpointFloodTests
{
    private sealed class CountingFactory : IServerConnectionFactory
    {
        public int Calls;
        public int Abandoned;
        public long HandshakeTimeoutUs = 10_000_000;

        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        {
            Calls++;
            options = new ConnectionOptions { Random = new SeededRandomSource(Calls), Name = "server", HandshakeTimeoutUs = HandshakeTimeoutUs };
            handshake = new FakeCryptoHandshake(isServer: true);
            return true;
        }

        public void Abandon(object? owner) => Abandoned++;
    }

    private static NetworkAddress Address(int host, ushort port) => new(new byte[] { 10, 0, (byte)(host >> 8), (byte)host }, port);

    /// <summary>A 1,200-byte datagram with a plausible client Initial header and a random (undecryptable) payload.</summary>
    private static byte[] ForgedInitial(Random random)
    {
        byte[] datagram = new byte[1200];
        random.NextBytes(datagram);
        datagram[0] = 0xC3; // long header, fixed bit, Initial, 4-byte packet number
        datagram[1] = 0; datagram[2] = 0; datagram[3] = 0; datagram[4] = 1; // QUIC v1
        datagram[5] = 8; // DCID length
        datagram[14] = 8; // SCID length
        datagram[23] = 0; // token length
        datagram[24] = 0x44; datagram[25] = 0x00; // payload length 1024 (2-byte varint)
        return datagram;
    }

    /// <summary>The first datagram of a real client (fake TLS, real Initial protection).</summary>
    private static byte[] RealInitial(int seed, out Endpoint clientEndpoint)
    {
        clientEndpoint = new Endpoint(new EndpointOptions { IsServer = false, Random = new SeededRandomSource(seed) });
        clientEndpoint.Connect(new ConnectionOptions { Random = new SeededRandomSource(seed + 1), Name = "client" }, new FakeCryptoHandshake(isServer: false), Address(1, 443), nowUs: 0);
        byte[] buffer = new byte[65536];
        Assert.True(clientEndpoint.TrySend(buffer, 0, out OutgoingDatagram datagram));
        return buffer.AsSpan(0, datagram.SegmentSize).ToArray();
    }

    [Fact]
    public void ForgedInitialsCreateNothingAndReachNoFactory()
    {
        var factory = new CountingFactory();
        using var server = new Endpoint(new EndpointOptions { IsServer = true, Random = new SeededRandomSource(7) }, factory);
        var random = new Random(42);
        for (int i = 0; i < 5000; i++)
        {
            server.Receive(ForgedInitial(random), Address(2 + (i % 200), (ushort)(1000 + i)), nowUs: i * 10);
        }
        Assert.Equal(0, factory.Calls);
        Assert.Empty(server.Connections);
        Assert.Equal(0, server.RouteCount);
        Assert.Equal(5000, server.UnauthenticatedInitialsDropped);
        Assert.False(server.TryAccept(out _));

        // A real client right after the flood is accepted and paired with its own connection.
        byte[] initial = RealInitial(100, out Endpoint client);
        using (client)
        {
            server.Receive(initial, Address(9999, 5000), nowUs: 60_000);
        }
        Assert.Equal(1, factory.Calls);
        Assert.True(server.TryAccept(out Connection accepted, out _));
        Assert.Equal(Address(9999, 5000), accepted.RemoteAddress);
    }

    [Fact]
    public void AuthenticInitialFloodIsBoundedByRetry()
    {
        var factory = new CountingFactory();
        var options = new EndpointOptions { IsServer = true, Random = new SeededRandomSource(8), RetryAboveHandshakes = 32 };
        using var server = new Endpoint(options, factory);
        byte[] buffer = new byte[65536];
        // Well-formed Initials (anyone can make them: Initial keys are public) from 100 spoofed addresses, never answered.
        for (int i = 0; i < 100; i++)
        {
            byte[] initial = RealInitial(1000 + i * 2, out Endpoint client);
            client.Dispose();
            server.Receive(initial, Address(10 + i, 4000), nowUs: i * 100);
            while (server.TrySend(buffer, i * 100, out _))
            {
            }
        }
        Assert.Equal(32, factory.Calls);
        Assert.Equal(32, server.Connections.Count);
        Assert.Equal(68, server.RetriesSent);
    }

    /// <summary>
    /// A client answered with a Retry because of load may send its first Initial again before it sees the Retry. When
    /// that copy arrives after the load dropped, it gets a Retry again rather than a connection: the client has moved
    /// on to the Retry's connection ID and keys, so a connection made from the copy would only hold a handshake place
    /// until its timeout. A new client at that moment is served without a Retry.
    /// </summary>
    [Fact]
    public void RepeatedInitialOfARetriedClientGetsARetryAfterTheLoadDropped()
    {
        // The load drops when two handshakes give up (2 s here), while the third client could still be repeating itself.
        var factory = new CountingFactory { HandshakeTimeoutUs = 2_000_000 };
        var options = new EndpointOptions { IsServer = true, Random = new SeededRandomSource(10), RetryAboveHandshakes = 2 };
        using var server = new Endpoint(options, factory);
        byte[] buffer = new byte[65536];
        void Drain(long nowUs)
        {
            while (server.TrySend(buffer, nowUs, out _))
            {
            }
        }

        // Two handshakes that never finish (their clients are gone) fill the load threshold.
        for (int i = 0; i < 2; i++)
        {
            byte[] initial = RealInitial(2000 + i * 2, out Endpoint gone);
            gone.Dispose();
            server.Receive(initial, Address(20 + i, 4000), nowUs: i * 100);
            Drain(i * 100);
        }
        Assert.Equal(2, factory.Calls);

        // The third client is asked to prove its address.
        byte[] retried = RealInitial(2100, out Endpoint third);
        using (third)
        {
            server.Receive(retried, Address(30, 4000), nowUs: 1_000);
            Drain(1_000);
            Assert.Equal(1, server.RetriesSent);

            // The two handshakes time out and leave: the load is gone.
            long now = 1_000;
            while (server.Connections.Count > 0 && now < 60_000_000)
            {
                now = Math.Max(now + 1, Math.Min(server.NextTimeoutUs, now + 1_000_000));
                server.OnTimeout(now);
                Drain(now);
            }
            Assert.Empty(server.Connections);
            Assert.True(now < RecentRetries.LifetimeUs, $"the handshakes took until {now} us to leave");

            // The copy of the retried Initial: a Retry again, no connection.
            server.Receive(retried, Address(30, 4000), nowUs: now);
            Drain(now);
            Assert.Equal(2, factory.Calls);
            Assert.Equal(2, server.RetriesSent);
            Assert.Empty(server.Connections);

            // A new client now: served at once.
            byte[] fresh = RealInitial(2200, out Endpoint fourth);
            fourth.Dispose();
            server.Receive(fresh, Address(40, 4000), nowUs: now + 1);
            Assert.Equal(3, factory.Calls);
            Assert.Equal(2, server.RetriesSent);
        }
    }

    [Fact]
    public void RefusedClientGetsConnectionCloseInInitialSpace()
    {
        var refusing = new RefusingFactory();
        using var server = new Endpoint(new EndpointOptions { IsServer = true, Random = new SeededRandomSource(9) }, refusing);
        byte[] initial = RealInitial(300, out Endpoint client);
        using (client)
        {
            server.Receive(initial, Address(1, 443), nowUs: 0);
            Assert.False(server.TryAccept(out _));
            Assert.Equal(1, server.ConnectionsRefused);
            byte[] buffer = new byte[65536];
            Assert.True(server.TrySend(buffer, 0, out OutgoingDatagram answer));
            client.Receive(buffer.AsSpan(0, answer.Length), Address(1, 443), nowUs: 1_000);
            Connection connection = Assert.Single(client.Connections);
            Assert.NotNull(connection.Error);
            Assert.Equal((ulong)TransportErrorCode.ConnectionRefused, connection.Error!.Code);
            Assert.True(connection.Error.ByPeer);
        }
    }

    private sealed class RefusingFactory : IServerConnectionFactory
    {
        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
            => throw new InvalidOperationException("Decide is used");

        public IncomingDecision Decide(in IncomingConnectionRequest request) => IncomingDecision.Refuse(TransportErrorCode.ConnectionRefused, "full");
    }
}
