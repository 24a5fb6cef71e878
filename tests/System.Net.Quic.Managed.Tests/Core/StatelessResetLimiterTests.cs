using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Stateless resets are rate-limited per source IP address and in all (<see cref="StatelessResetLimiter"/>): the
/// limiter alone, and a server endpoint under a burst of short-header datagrams for unknown connection IDs.
/// </summary>
public class StatelessResetLimiterTests
{
    private sealed class NoConnections : IServerConnectionFactory
    {
        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        {
            options = null!;
            handshake = null!;
            return false;
        }
    }

    private static NetworkAddress Address(int host, ushort port) => new(new byte[] { 10, 0, (byte)(host >> 8), (byte)host }, port);

    [Fact]
    public void OneAddressGetsAtMostTheLimitPerSecondWhateverItsPort()
    {
        var limiter = new StatelessResetLimiter();
        int allowed = 0;
        for (int i = 0; i < 10_000; i++)
        {
            if (limiter.TryAcquire(Address(1, (ushort)(1000 + (i % 50))), nowUs: i * 50)) allowed++; // 10,000 in 0.5 s
        }
        Assert.Equal(StatelessResetLimiter.PerAddressLimit, allowed);
    }

    [Fact]
    public void TheAllowanceComesBackEachSecond()
    {
        var limiter = new StatelessResetLimiter();
        int allowed = 0;
        for (int i = 0; i < 30_000; i++)
        {
            if (limiter.TryAcquire(Address(1, 4433), nowUs: i * 100)) allowed++; // 3 s
        }
        Assert.Equal(3 * StatelessResetLimiter.PerAddressLimit, allowed);
    }

    [Fact]
    public void ManyAddressesAreBoundedByTheGlobalLimit()
    {
        var limiter = new StatelessResetLimiter();
        int allowed = 0;
        for (int i = 0; i < 5000; i++)
        {
            if (limiter.TryAcquire(Address(i, 4433), nowUs: i)) allowed++;
        }
        Assert.Equal(StatelessResetLimiter.GlobalLimit, allowed);
    }

    [Fact]
    public void AnotherAddressIsNotHeldBackByOneThatUsedItsAllowance()
    {
        var limiter = new StatelessResetLimiter();
        for (int i = 0; i < 100; i++) limiter.TryAcquire(Address(1, 4433), nowUs: i);
        // Address 2 may share a slot with address 1 by hash; find one that does not (the table has 1,024 slots).
        int granted = 0;
        for (int host = 2; host < 12; host++)
        {
            if (limiter.TryAcquire(Address(host, 4433), nowUs: 200)) granted++;
        }
        Assert.True(granted >= 9, $"{granted} of 10 other addresses got a reset");
    }

    [Fact]
    public void ServerAnswersABurstOfUnknownShortHeaderDatagramsWithAtMostTheLimit()
    {
        using var server = new Endpoint(new EndpointOptions { IsServer = true, Random = new SeededRandomSource(3) }, new NoConnections());
        var random = new Random(5);
        byte[] datagram = new byte[50];
        int sent = 0;
        byte[] buffer = new byte[65536];
        for (int i = 0; i < 10_000; i++)
        {
            random.NextBytes(datagram);
            datagram[0] = (byte)(0x40 | (datagram[0] & 0x3F)); // short header, fixed bit
            server.Receive(datagram, Address(7, 50000), nowUs: i * 20); // 10,000 in 0.2 s from one port
            while (server.TrySend(buffer, i * 20, out OutgoingDatagram outgoing))
            {
                Assert.True(outgoing.SegmentSize < datagram.Length); // RFC 9000 §10.3: smaller than its trigger
                sent++;
            }
        }
        Assert.Equal(StatelessResetLimiter.PerAddressLimit, sent);
        Assert.Equal(StatelessResetLimiter.PerAddressLimit, server.StatelessResetsSent);
        Assert.Equal(10_000 - StatelessResetLimiter.PerAddressLimit, server.StatelessResetsLimited);
    }
}
