using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionTransferTests(ITestOutputHelper output)
{
    [Fact]
    public void OneMegabyteArrivesIntact()
    {
        using var pair = new QuicPair(seed: 10);
        Assert.True(pair.Handshake());
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 1 << 20);
        transfer.Run(30_000_000);
        output.WriteLine($"received {transfer.Received} fin={transfer.ReceivedFin} at {pair.Network.NowUs} us, lost {pair.ClientConnection!.Statistics.PacketsLost}");
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin);
    }

    [Theory]
    [InlineData(0.00, 11)]
    [InlineData(0.01, 12)]
    [InlineData(0.05, 13)]
    [InlineData(0.10, 14)]
    public void TenMegabytesSurviveLossAndReordering(double loss, int seed)
    {
        var link = new LinkConditions
        {
            DelayUs = 10_000, BandwidthBitsPerSecond = 100_000_000, QueueLimitBytes = 1 << 20,
            LossProbability = loss, ReorderProbability = loss > 0 ? 0.02 : 0, ReorderExtraDelayUs = 3_000,
        };
        using var pair = new QuicPair(seed, link);
        Assert.True(pair.Handshake());
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 10 << 20);
        transfer.Run(300_000_000);
        ConnectionStatistics stats = pair.ClientConnection!.Statistics;
        output.WriteLine($"loss {loss:P0}: {transfer.Received} bytes in {(transfer.EndUs - transfer.StartUs) / 1000} ms, goodput {transfer.GoodputBitsPerSecond / 1e6:F1} Mbit/s, " +
            $"packets sent {stats.PacketsSent}, lost {stats.PacketsLost}, link drops {pair.Link.AToB.Statistics.DroppedDatagrams}");
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin, $"only {transfer.Received} of {10 << 20} bytes arrived");
        if (loss > 0) Assert.True(stats.PacketsLost > 0);
    }
}

public class ConnectionGoodputTests(ITestOutputHelper output)
{
    /// <summary>On a 50 Mbit/s, 20 ms RTT link without loss, goodput reaches at least 90 % of the link rate.</summary>
    [Theory]
    [InlineData("cubic")]
    [InlineData("newreno")]
    public void GoodputOnA50MbitLinkIsAtLeast90Percent(string name)
    {
        CongestionControlAlgorithm algorithm = name == "cubic" ? CongestionControlAlgorithm.Cubic : CongestionControlAlgorithm.NewReno;
        const long rate = 50_000_000;
        // A queue of one bandwidth-delay product (125 KB), as a router would have.
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = rate, QueueLimitBytes = 125_000 };
        using var pair = new QuicPair(20, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, MaxDatagramSize = 1452, CongestionControl = algorithm, Streams = QuicPair.DefaultStreams };
        });
        Assert.True(pair.Handshake());
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 20 << 20);
        transfer.Run(60_000_000);
        Assert.True(transfer.ReceivedFin);
        double goodput = transfer.GoodputBitsPerSecond;
        // Goodput counts stream payload only; the link also carries QUIC, UDP and IP headers (about 4 %).
        output.WriteLine($"{algorithm}: 20 MiB in {(transfer.EndUs - transfer.StartUs) / 1000} ms = {goodput / 1e6:F2} Mbit/s ({goodput / rate:P1} of the link), lost {pair.ClientConnection!.Statistics.PacketsLost}");
        Assert.True(goodput >= 0.9 * rate, $"goodput {goodput / 1e6:F2} Mbit/s is below 90 % of {rate / 1e6} Mbit/s");
    }
}
