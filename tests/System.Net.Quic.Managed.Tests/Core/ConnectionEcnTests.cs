using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Recovery;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>ECN (RFC 9000 §13.4, RFC 9002 §7.1) end to end on the deterministic simulator.</summary>
public class ConnectionEcnTests
{
    private readonly ITestOutputHelper _output;

    public ConnectionEcnTests(ITestOutputHelper output) => _output = output;

    private static QuicPair CreatePair(int seed, LinkConditions link, LinkConditions? reverse = null)
    {
        var pair = new QuicPair(seed, link, reverse);
        pair.Client.EcnCapable = true;
        pair.Server.EcnCapable = true;
        return pair;
    }

    private static StreamTransfer Transfer(QuicPair pair, long bytes, long maxUs = 30_000_000)
    {
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, bytes);
        transfer.Run(maxUs);
        Assert.True(transfer.ReceivedFin && !transfer.Corrupted, "the transfer did not complete intact");
        return transfer;
    }

    [Fact]
    public void CountsAreEchoedAndThePathValidates()
    {
        using QuicPair pair = CreatePair(1501, new LinkConditions { DelayUs = 10_000 });
        Assert.True(pair.Handshake());
        Transfer(pair, 256 * 1024);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        _output.WriteLine($"client ECN {client.Ecn.State}, marked {client.Ecn.MarkedPacketsSent}, peer reported {client.Ecn.ReportedByPeer}, server received {server.ReceivedEcnCounts}");

        Assert.Equal(EcnValidationState.Capable, client.Ecn.State);
        Assert.Equal((byte)EcnCodepoint.Ect0, client.OutgoingEcn);
        // The server counted our ECT(0) 1-RTT packets and reported them back: the counts we hold are the ones it sent.
        Assert.True(server.ReceivedEcnCounts.Ect0 > 100, $"server saw {server.ReceivedEcnCounts.Ect0} ECT(0) packets");
        Assert.Equal(0, server.ReceivedEcnCounts.Ce);
        Assert.True(client.Ecn.ReportedByPeer.Ect0 > 0 && client.Ecn.ReportedByPeer.Ect0 <= server.ReceivedEcnCounts.Ect0);
        Assert.Equal(0, client.Ecn.CongestionSignals);
        Assert.Equal(long.MaxValue, client.CongestionController.SlowStartThreshold); // ECT alone is no congestion signal
    }

    [Fact]
    public void WithoutEcnOnThePathNothingIsMarkedAfterValidationFails()
    {
        // The default simulator host (like a socket that cannot read the TOS byte): the peer reports no counts.
        using var pair = new QuicPair(1502, new LinkConditions { DelayUs = 10_000 });
        Assert.True(pair.Handshake());
        Transfer(pair, 64 * 1024);
        Assert.Equal(EcnValidationState.Failed, pair.ClientConnection!.Ecn.State);
        Assert.Equal(0, pair.ClientConnection.OutgoingEcn);
        Assert.Equal(0, pair.ServerConnection!.ReceivedEcnCounts.Ect0);
    }

    [Fact]
    public void ABleachingPathFailsValidation()
    {
        using QuicPair pair = CreatePair(1503, new LinkConditions { DelayUs = 10_000, BleachEcn = true }, new LinkConditions { DelayUs = 10_000 });
        Assert.True(pair.Handshake());
        Transfer(pair, 128 * 1024);
        Connection client = pair.ClientConnection!;
        _output.WriteLine($"client ECN {client.Ecn.State}: {client.Ecn.FailureReason}");
        Assert.Equal(EcnValidationState.Failed, client.Ecn.State);
        Assert.Contains("without ECN counts", client.Ecn.FailureReason);
        Assert.Equal(0, client.OutgoingEcn);
        Assert.True(client.Ecn.MarkedPacketsSent <= 3 * EcnValidator.TestingDatagrams, $"{client.Ecn.MarkedPacketsSent} marked packets");
        // The reverse path carries ECN: the server's marks reach the client and the server's side can validate.
        Assert.True(client.ReceivedEcnCounts.Ect0 > 0);
    }

    [Fact]
    public void ARemarkingPathFailsValidation()
    {
        using QuicPair pair = CreatePair(1504, new LinkConditions { DelayUs = 10_000, RemarkEcnTo = (byte)EcnCodepoint.Ect1 }, new LinkConditions { DelayUs = 10_000 });
        Assert.True(pair.Handshake());
        Transfer(pair, 128 * 1024);
        Connection client = pair.ClientConnection!;
        _output.WriteLine($"client ECN {client.Ecn.State}: {client.Ecn.FailureReason}");
        Assert.Equal(EcnValidationState.Failed, client.Ecn.State);
        Assert.Contains("ECT(1)", client.Ecn.FailureReason);
        Assert.Equal(0, client.OutgoingEcn);
        Assert.True(client.Ecn.MarkedPacketsSent <= 3 * EcnValidator.TestingDatagrams, $"{client.Ecn.MarkedPacketsSent} marked packets");
    }

    [Theory]
    [InlineData(1505, 0.0)]
    [InlineData(1506, 0.01)]
    public void CeMarksReduceTheWindowAtMostOncePerRoundTrip(int seed, double loss)
    {
        var forward = new LinkConditions { DelayUs = 20_000, BandwidthBitsPerSecond = 20_000_000, CeMarkProbability = 0.03, LossProbability = loss };
        using QuicPair pair = CreatePair(seed, forward, new LinkConditions { DelayUs = 20_000 });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        var transfer = new StreamTransfer(pair, client, pair.ServerConnection!, 2 << 20);
        long lastWindow = client.CongestionController.CongestionWindow;
        long lastRecoveryStart = client.CongestionController.RecoveryStartTimeUs;
        int reductions = 0;
        var reductionTimes = new List<long>();
        pair.RunUntil(() =>
        {
            bool done = transfer.Step();
            long recoveryStart = client.CongestionController.RecoveryStartTimeUs;
            if (recoveryStart != lastRecoveryStart)
            {
                reductions++;
                reductionTimes.Add(pair.Network.NowUs);
                lastRecoveryStart = recoveryStart;
            }
            lastWindow = client.CongestionController.CongestionWindow;
            return done;
        }, 60_000_000);
        Assert.True(transfer.ReceivedFin && !transfer.Corrupted);
        long signals = client.Ecn.CongestionSignals;
        long ceMarked = pair.ServerConnection!.ReceivedEcnCounts.Ce;
        _output.WriteLine($"CE packets {ceMarked}, CE signals {signals}, window reductions {reductions}, lost {client.Statistics.PacketsLost}, srtt {client.Rtt.SmoothedRttUs} us, ECN {client.Ecn.State}");

        Assert.Equal(EcnValidationState.Capable, client.Ecn.State);
        Assert.True(ceMarked > 10, $"only {ceMarked} CE-marked packets");
        Assert.True(signals > 0);
        // CE is a congestion signal: without loss, every reduction comes from it.
        if (loss == 0) Assert.True(reductions > 0 && client.Statistics.PacketsLost == 0);
        // One reduction per round trip (RFC 9002 §7.3.2): more CE marks than reductions, and reductions at least ~an RTT apart.
        Assert.True(reductions < ceMarked + client.Statistics.PacketsLost, $"{reductions} reductions for {ceMarked} CE marks and {client.Statistics.PacketsLost} losses");
        long minRtt = client.Rtt.MinRttUs;
        for (int i = 1; i < reductionTimes.Count; i++)
        {
            Assert.True(reductionTimes[i] - reductionTimes[i - 1] >= minRtt / 2, $"two reductions {reductionTimes[i] - reductionTimes[i - 1]} us apart (min RTT {minRtt} us)");
        }
    }

    [Fact]
    public void EcnCanBeTurnedOff()
    {
        using QuicPair pair = CreatePair(1507, new LinkConditions { DelayUs = 10_000 });
        pair.ClientOptions = new ConnectionOptions { Random = pair.ClientOptions.Random, Name = "client", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams, EnableEcn = false };
        Assert.True(pair.Handshake());
        Transfer(pair, 64 * 1024);
        Assert.Equal(EcnValidationState.Disabled, pair.ClientConnection!.Ecn.State);
        Assert.Equal(0, pair.ClientConnection.Ecn.MarkedPacketsSent);
        Assert.Equal(0, pair.ServerConnection!.ReceivedEcnCounts.Ect0);
        // The other direction still works: the server marks, the client counts (receiving needs no option).
        Assert.True(pair.ClientConnection.ReceivedEcnCounts.Ect0 > 0);
    }
}
