using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>What the public API's connections advertise must match what the I/O layer can take.</summary>
public class AdvertisedLimitsTests
{
    [Fact]
    public async Task MaxUdpPayloadSizeIsWhatEveryReceivePathAccepts()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            // RFC 9000 §18.2: a peer must not send datagrams above it. The recvmmsg path without GRO reads 4 KiB slots;
            // with GRO (64 KiB slots) and on the portable path (a 64 KiB buffer) any datagram arrives whole.
            Assert.Equal((ulong)Expected(((ManagedConnection)server.Impl).Host.Driver), ((ManagedConnection)client.Impl).Core!.PeerParameters!.MaxUdpPayloadSize);
            Assert.Equal((ulong)Expected(((ManagedConnection)client.Impl).Host.Driver), ((ManagedConnection)server.Impl).Core!.PeerParameters!.MaxUdpPayloadSize);
        }
    }

    private static int Expected(System.Net.Quic.Managed.Io.UdpDriver driver)
    {
        int expected = driver.BatchedReceive && !driver.CoalescedReceive ? System.Net.Quic.Managed.Io.UdpReceiver.MaxReceivableDatagram : System.Net.Quic.Managed.Io.UdpReceiver.MaxUdpPayload;
        Assert.Equal(expected, driver.MaxReceivableDatagram);
        return expected;
    }

    [Theory]
    [InlineData("127.0.0.1", 0, QuicConnectionOptions.LoopbackMaxPathDatagramSize)]
    [InlineData("127.1.2.3", 0, QuicConnectionOptions.LoopbackMaxPathDatagramSize)]
    [InlineData("::1", 0, QuicConnectionOptions.LoopbackMaxPathDatagramSize)]
    [InlineData("::ffff:127.0.0.1", 0, QuicConnectionOptions.LoopbackMaxPathDatagramSize)]
    [InlineData("192.0.2.1", 0, QuicConnectionOptions.DefaultMaxPathDatagramSize)]
    [InlineData("2001:db8::1", 0, QuicConnectionOptions.DefaultMaxPathDatagramSize)]
    [InlineData("::ffff:192.0.2.1", 0, QuicConnectionOptions.DefaultMaxPathDatagramSize)]
    [InlineData("127.0.0.1", 1452, 1452)]
    [InlineData("192.0.2.1", 9000, 9000)]
    [InlineData("192.0.2.1", 1200, 1200)]
    public void PathMtuDiscoveryProbesToTheLoopbackCeilingOnlyTowardsALoopbackAddress(string remote, int configured, int expected)
    {
        var options = new QuicClientConnectionOptions
        {
            RemoteEndPoint = new IPEndPoint(IPAddress.Parse(remote), 443),
            ClientAuthenticationOptions = new System.Net.Security.SslClientAuthenticationOptions(),
            MaxPathDatagramSize = configured,
        };
        System.Net.Quic.Managed.Core.ConnectionOptions core = ManagedOptionsMapping.ToConnectionOptions(options, (IPEndPoint)options.RemoteEndPoint, "test", 2048);
        Assert.Equal(expected, core.MaxPathDatagramSize);
        Assert.Equal(2048UL, core.MaxUdpPayloadSize); // what the socket receives whole is advertised, whatever the path
    }
}
