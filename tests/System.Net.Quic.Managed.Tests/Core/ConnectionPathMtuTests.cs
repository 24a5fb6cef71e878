using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>DPLPMTUD (RFC 8899, RFC 9000 §14.3) on the deterministic simulator, over links with a path MTU.</summary>
public class ConnectionPathMtuTests
{
    private readonly ITestOutputHelper _output;

    public ConnectionPathMtuTests(ITestOutputHelper output) => _output = output;

    private static QuicPair CreatePair(int seed, LinkConditions link, int maxPathDatagramSize)
        => new(seed, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions
            {
                Random = p.ClientOptions.Random, Name = "client", MaxDatagramSize = 1200, Streams = QuicPair.DefaultStreams,
                MaxPathDatagramSize = maxPathDatagramSize, MaxUdpPayloadSize = 65527,
            };
            p.ServerOptions = new ConnectionOptions
            {
                Random = p.ServerOptions.Random, Name = "server", MaxDatagramSize = 1200, Streams = QuicPair.DefaultStreams,
                MaxPathDatagramSize = maxPathDatagramSize, MaxUdpPayloadSize = 65527,
            };
        });

    [Theory]
    [InlineData(1601, 1500, 1500)]
    [InlineData(1602, 1400, 9000)]
    [InlineData(1603, 1280, 1452)]
    public void ConvergesToThePathMtu(int seed, int pathMtu, int max)
    {
        using QuicPair pair = CreatePair(seed, new LinkConditions { DelayUs = 10_000, MaxDatagramSize = pathMtu }, max);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        Assert.Equal(1200, client.CurrentMaxDatagramSize);
        var transfer = new StreamTransfer(pair, client, pair.ServerConnection!, 1 << 20);
        // The search goes on after the transfer: an idle connection's PTO declares the last probes lost.
        pair.RunUntil(() => transfer.Step() && client.PathMtu.SearchComplete && pair.ServerConnection!.PathMtu.SearchComplete, 120_000_000);
        Assert.True(transfer.ReceivedFin && !transfer.Corrupted);
        PathMtuDiscovery pmtu = client.PathMtu;
        _output.WriteLine($"path {pathMtu}, max {max}: now {client.CurrentMaxDatagramSize}, probes {pmtu.ProbesSent} sent / {pmtu.ProbesAcknowledged} acked / {pmtu.ProbesLost} lost, complete {pmtu.SearchComplete}, lost packets {client.Statistics.PacketsLost}");

        Assert.True(pmtu.SearchComplete);
        Assert.Equal(Math.Min(pathMtu, max), client.CurrentMaxDatagramSize);
        Assert.True(pair.Link.AToB.Statistics.DeliveredBytes > 0);
        // Lost probes are no congestion signal (RFC 9000 §14.4): on this lossless link the window never went down.
        Assert.Equal(long.MaxValue, client.CongestionController.SlowStartThreshold);
        Assert.Equal(pmtu.ProbesLost, client.Statistics.PacketsLost);
        // The server probes too (its own direction).
        Assert.Equal(Math.Min(pathMtu, max), pair.ServerConnection!.CurrentMaxDatagramSize);
    }

    [Fact]
    public void ABlackHoleFallsBackToTheBaseAndSearchesAgain()
    {
        var link = new LinkConditions { DelayUs = 10_000 };
        using QuicPair pair = CreatePair(1604, link, 1452);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        var transfer = new StreamTransfer(pair, client, pair.ServerConnection!, 4 << 20);
        pair.RunUntil(() => transfer.Step() || client.CurrentMaxDatagramSize == 1452, 10_000_000);
        Assert.Equal(1452, client.CurrentMaxDatagramSize);
        Assert.False(transfer.Done);

        // The path now drops everything above 1,300 bytes (a tunnel came up): a black hole for our 1,452-byte packets.
        link.MaxDatagramSize = 1300;
        int smallest = int.MaxValue;
        pair.RunUntil(() =>
        {
            smallest = Math.Min(smallest, client.CurrentMaxDatagramSize);
            return transfer.Step();
        }, 60_000_000);
        PathMtuDiscovery pmtu = client.PathMtu;
        _output.WriteLine($"now {client.CurrentMaxDatagramSize}, smallest {smallest}, black holes {pmtu.BlackHolesDetected}, probes {pmtu.ProbesSent}/{pmtu.ProbesAcknowledged}/{pmtu.ProbesLost}");
        Assert.True(transfer.ReceivedFin && !transfer.Corrupted, "the transfer did not survive the black hole");
        Assert.True(pmtu.BlackHolesDetected >= 1);
        Assert.Equal(PathMtuDiscovery.BaseSize, smallest);
        Assert.InRange(client.CurrentMaxDatagramSize, PathMtuDiscovery.BaseSize, 1300);
    }

    /// <summary>
    /// The client's NAT gives it a new port in the middle of a download, after discovery raised the size to the ceiling.
    /// The server's search starts over on the new path, where so far only the client's small ACKs arrived; its first
    /// probe (the ceiling: 1452 bytes by default, 16,000 towards loopback) is more than three times that and must wait
    /// until the path is validated. Sent at once, it used up the anti-amplification budget (RFC 9000 §9.3) and the
    /// PATH_CHALLENGE could never follow.
    /// </summary>
    [Theory]
    [InlineData(1452)]
    [InlineData(16_000)]
    public void APeersNewAddressIsValidatedBeforeTheSearchProbesIt(int ceiling)
    {
        using QuicPair pair = CreatePair(1607, new LinkConditions { DelayUs = 1_000 }, ceiling);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        const long total = 8 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        var newAddress = new SimAddress(QuicPair.ClientHost, 50007);
        bool rebound = false;
        long toNewAddressBeforeValidation = 0, fromNewAddress = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.From == newAddress && server.PathValidations == 0) fromNewAddress += d.Length;
            if (d.From.Host == QuicPair.ServerHost && d.To == newAddress && server.PathValidations == 0) toNewAddressBeforeValidation += d.Length;
            return InterceptAction.Pass;
        };
        pair.RunUntil(() =>
        {
            download.Step();
            if (!rebound && server.CurrentMaxDatagramSize == ceiling && download.Received > total / 4)
            {
                pair.Network.Rebind(pair.Client, newAddress);
                rebound = true;
            }
            return download.Done;
        }, 60_000_000);
        _output.WriteLine($"validations {server.PathValidations}, before validation {toNewAddressBeforeValidation} bytes to the new address, {fromNewAddress} from it; server size {server.CurrentMaxDatagramSize}, received {download.Received}");
        Assert.True(rebound);
        Assert.True(download.ReceivedFin && !download.Corrupted, "the download did not complete");
        Assert.Equal(1, server.PathValidations);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(newAddress), server.RemoteAddress);
        Assert.InRange(toNewAddressBeforeValidation, 1, 3 * fromNewAddress); // RFC 9000 §9.3: at most three times what arrived
        // After validation the search runs again on the new path and reaches the same size.
        pair.RunUntil(() => server.CurrentMaxDatagramSize == ceiling, 10_000_000);
        Assert.Equal(ceiling, server.CurrentMaxDatagramSize);
    }

    [Fact]
    public void WithoutDiscoveryTheSizeStays()
    {
        using QuicPair pair = CreatePair(1605, new LinkConditions { DelayUs = 10_000 }, 0);
        Assert.True(pair.Handshake());
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 256 * 1024);
        transfer.Run(30_000_000);
        Assert.True(transfer.ReceivedFin);
        Assert.Equal(1200, pair.ClientConnection!.CurrentMaxDatagramSize);
        Assert.Equal(0, pair.ClientConnection.PathMtu.ProbesSent);
    }

    [Fact]
    public void ProbesNeverExceedThePeersMaxUdpPayloadSize()
    {
        using QuicPair pair = new(1606, new LinkConditions { DelayUs = 10_000 }, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", MaxDatagramSize = 1200, Streams = QuicPair.DefaultStreams, MaxPathDatagramSize = 9000 };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", MaxDatagramSize = 1200, Streams = QuicPair.DefaultStreams, MaxUdpPayloadSize = 1350 };
        });
        Assert.True(pair.Handshake());
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 256 * 1024);
        transfer.Run(30_000_000);
        Assert.True(transfer.ReceivedFin);
        Assert.Equal(1350, pair.ClientConnection!.CurrentMaxDatagramSize);
    }
}
