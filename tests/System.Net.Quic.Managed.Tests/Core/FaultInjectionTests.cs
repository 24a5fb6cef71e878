using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Link faults in the deterministic simulator, each with its expected outcome and bound (simulated time):
/// duplicated datagrams change nothing, corrupted ones (one flipped bit) are discarded by packet protection and the
/// connection carries on, all faults at once still deliver every byte, and a peer that vanishes mid-transfer is given
/// up at the idle timeout. Loss alone (30 % during the handshake, 10 % during a transfer), reordering and a server that
/// restarts are covered by HandshakeUnderHeavyLossTests, ConnectionTransferTests and ConnectionLifetimeTests.
/// </summary>
public class FaultInjectionTests(ITestOutputHelper output)
{
    private const long TransferBytes = 2 << 20;

    /// <summary>
    /// Every datagram has a 25 % chance of a second copy, each way, from the first Initial on (real TLS): the handshake
    /// completes, the 2 MiB arrive intact and nobody closes (RFC 9000 §12.3: a duplicate packet number is discarded,
    /// §13.1; duplicate CRYPTO and STREAM data are ignored).
    /// </summary>
    [Theory]
    [InlineData(1801)]
    [InlineData(1802)]
    public void DuplicatedDatagramsChangeNothing(int seed)
    {
        var link = new LinkConditions { DelayUs = 10_000, DuplicationProbability = 0.25, DuplicateExtraDelayUs = 3_000 };
        using var pair = new QuicPair(seed, link, configure: p => ConnectionTlsTests.UseRealTls(p));
        StreamTransfer transfer = HandshakeAndTransfer(pair, 60_000_000);
        Assert.True(pair.Link.AToB.Statistics.Duplicated + pair.Link.BToA.Statistics.Duplicated > 100);
        AssertTransferredAndStillOpen(pair, transfer);
    }

    /// <summary>
    /// 5 % of the datagrams each way get one bit flipped, from the first Initial on (real TLS). A flip in the protected
    /// part fails AEAD authentication and the packet is dropped (RFC 9001 §5.5: not an error); a flip in the header
    /// lands the datagram on no connection, or on a header check. Either way it is only a loss: the handshake
    /// completes, every byte of 2 MiB arrives intact and both connections stay open.
    /// </summary>
    [Theory]
    [InlineData(1811)]
    [InlineData(1812)]
    [InlineData(1813)]
    public void CorruptedDatagramsAreDroppedAndTheConnectionSurvives(int seed)
    {
        var link = new LinkConditions { DelayUs = 10_000, CorruptionProbability = 0.05 };
        using var pair = new QuicPair(seed, link, configure: p => ConnectionTlsTests.UseRealTls(p));
        StreamTransfer transfer = HandshakeAndTransfer(pair, 60_000_000);
        long corrupted = pair.Link.AToB.Statistics.Corrupted + pair.Link.BToA.Statistics.Corrupted;
        long dropped = pair.ClientConnection!.Statistics.PacketsDropped + pair.ServerConnection!.Statistics.PacketsDropped;
        output.WriteLine($"corrupted datagrams {corrupted}, packets dropped by the connections {dropped}");
        Assert.True(corrupted > 20, $"only {corrupted} datagrams corrupted");
        Assert.True(dropped > 0, "no corrupted packet reached a connection's packet protection");
        AssertTransferredAndStillOpen(pair, transfer);
    }

    /// <summary>
    /// Everything at once, each way: 10 % loss, 5 % reordering, 5 % duplication, 2 % corruption and jitter. 2 MiB
    /// arrive intact within 120 s of simulated time.
    /// </summary>
    [Theory]
    [InlineData(1821)]
    [InlineData(1822)]
    public void LossReorderingDuplicationAndCorruptionTogether(int seed)
    {
        var link = new LinkConditions
        {
            DelayUs = 10_000, JitterUs = 2_000, BandwidthBitsPerSecond = 100_000_000, QueueLimitBytes = 1 << 20,
            LossProbability = 0.10, ReorderProbability = 0.05, ReorderExtraDelayUs = 5_000,
            DuplicationProbability = 0.05, DuplicateExtraDelayUs = 2_000, CorruptionProbability = 0.02,
        };
        using var pair = new QuicPair(seed, link, configure: p => ConnectionTlsTests.UseRealTls(p));
        StreamTransfer transfer = HandshakeAndTransfer(pair, 120_000_000);
        AssertTransferredAndStillOpen(pair, transfer);
    }

    /// <summary>
    /// The peer disappears in the middle of a transfer (every datagram lost both ways from then on). Both ends give up
    /// with IdleTimeout at the negotiated idle timeout (2 s) after the last datagram they received, at most 3 PTO later
    /// (RFC 9000 §10.1), however many retransmissions they had outstanding; nothing is left on either endpoint.
    /// </summary>
    [Theory]
    [InlineData(1831)]
    [InlineData(1832)]
    public void PeerThatVanishesMidTransferIsGivenUpAtTheIdleTimeout(int seed)
    {
        var link = new LinkConditions { DelayUs = 10_000, JitterUs = 1_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20 };
        var reverse = link.Clone();
        using var pair = new QuicPair(seed, link, reverse, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 2_000_000, Streams = QuicPair.DefaultStreams };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", IdleTimeoutUs = 2_000_000, Streams = QuicPair.DefaultStreams };
        });
        long lastToClient = 0, lastToServer = 0;
        bool vanished = false;
        pair.Network.Interceptor = d =>
        {
            if (vanished) return InterceptAction.Drop;
            // When it will arrive (the delay; serialization at this rate adds well under a millisecond).
            if (d.To.Host == QuicPair.ClientHost) lastToClient = d.NowUs + 10_000; // + up to 1 ms of jitter
            else lastToServer = d.NowUs + 10_000;
            return InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        var transfer = new StreamTransfer(pair, client, server, 64L << 20);
        pair.RunUntil(() => transfer.Step() || transfer.Received > (1 << 20), 30_000_000);
        Assert.InRange(transfer.Received, 1 << 20, (64L << 20) - 1);
        vanished = true;
        long vanishedUs = pair.Network.NowUs;
        long clientClosedUs = -1, serverClosedUs = -1;
        pair.RunUntil(() =>
        {
            transfer.Step();
            if (clientClosedUs < 0 && client.Phase != ConnectionPhase.Open) clientClosedUs = pair.Network.NowUs;
            if (serverClosedUs < 0 && server.Phase != ConnectionPhase.Open) serverClosedUs = pair.Network.NowUs;
            return clientClosedUs >= 0 && serverClosedUs >= 0;
        }, 30_000_000);
        long pto = Math.Max(client.Recovery.PtoDurationUs, server.Recovery.PtoDurationUs);
        output.WriteLine($"vanished at {vanishedUs} us; client closed {clientClosedUs - lastToClient} us after its last receipt, "
            + $"server {serverClosedUs - lastToServer} us; PTO {pto} us");
        Assert.True(clientClosedUs > 0 && serverClosedUs > 0, "an end never gave up");
        Assert.Equal(ConnectionErrorSource.IdleTimeout, client.Error!.Source);
        Assert.Equal(ConnectionErrorSource.IdleTimeout, server.Error!.Source);
        Assert.InRange(clientClosedUs - lastToClient, 2_000_000 - 20_000, 2_000_000 + 3 * pto);
        Assert.InRange(serverClosedUs - lastToServer, 2_000_000 - 20_000, 2_000_000 + 3 * pto);
        pair.RunUntil(() => false, 100_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
        Assert.Empty(pair.ServerEndpoint.Connections);
    }

    private StreamTransfer HandshakeAndTransfer(QuicPair pair, long maxUs)
    {
        pair.Network.TraceEnabled = false;
        Assert.True(pair.Handshake(), "the handshake did not complete");
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, TransferBytes);
        transfer.Run(maxUs);
        output.WriteLine($"seed {pair.Seed}: {transfer.Received} bytes by {pair.Network.NowUs / 1000} ms; a->b {pair.Link.AToB.Statistics}; b->a {pair.Link.BToA.Statistics}");
        return transfer;
    }

    private static void AssertTransferredAndStillOpen(QuicPair pair, StreamTransfer transfer)
    {
        Assert.False(transfer.Corrupted, "the receiver read corrupted data");
        Assert.True(transfer.ReceivedFin, $"only {transfer.Received} of {TransferBytes} bytes arrived");
        Assert.Equal(TransferBytes, transfer.Received);
        Assert.Equal(ConnectionPhase.Open, pair.ClientConnection!.Phase);
        Assert.Equal(ConnectionPhase.Open, pair.ServerConnection!.Phase);
        Assert.Null(pair.ClientConnection.Error);
        Assert.Null(pair.ServerConnection.Error);
    }
}
