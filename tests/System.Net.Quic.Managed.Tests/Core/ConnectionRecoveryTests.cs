using System.Buffers.Binary;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionRecoveryTests(ITestOutputHelper output)
{
    /// <summary>
    /// RFC 9002 §7 / RFC 9438: a burst of 40 consecutive lost datagrams in the middle of a transfer; CUBIC reduces its
    /// window once (one congestion event for the burst), climbs back above the reduced window, and the data is complete.
    /// </summary>
    [Fact]
    public void CubicRecoversFromALossBurst()
    {
        // A queue of two bandwidth-delay products: the window stays below what would overflow it, so the burst is the
        // only loss, and the sender is limited by its window (not by flow control), so the window can grow back.
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 250_000 };
        using var pair = new QuicPair(seed: 800, link);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        const long total = 16 << 20;
        var transfer = new StreamTransfer(pair, client, pair.ServerConnection!, total);
        long burstStart = -1, dropped = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host != QuicPair.ClientHost) return InterceptAction.Pass;
            if (burstStart < 0 && transfer.Received > total / 4) burstStart = d.Index;
            if (burstStart >= 0 && d.Index < burstStart + 40)
            {
                dropped++;
                return InterceptAction.Drop;
            }
            return InterceptAction.Pass;
        };
        long cwndBeforeBurst = 0, minAfterBurst = long.MaxValue, maxAfterMin = 0;
        long lostBefore = 0;
        pair.RunUntil(() =>
        {
            bool done = transfer.Step();
            long cwnd = client.CongestionController.CongestionWindow;
            if (burstStart < 0) { cwndBeforeBurst = cwnd; lostBefore = client.Statistics.PacketsLost; }
            else if (cwnd < minAfterBurst) { minAfterBurst = cwnd; maxAfterMin = cwnd; }
            else maxAfterMin = Math.Max(maxAfterMin, cwnd);
            return done;
        }, 60_000_000);
        output.WriteLine($"cwnd before {cwndBeforeBurst}, min after burst {minAfterBurst}, max after that {maxAfterMin}; dropped {dropped}; " +
            $"lost {client.Statistics.PacketsLost - lostBefore}; {transfer.GoodputBitsPerSecond / 1e6:F1} Mbit/s");
        Assert.Equal(40, dropped);
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin);
        Assert.Equal(40, client.Statistics.PacketsLost - lostBefore);
        Assert.True(minAfterBurst < cwndBeforeBurst, "the burst did not reduce the window");
        // RFC 9002 §7.3.2 / RFC 9438 §4.6: one congestion event for the whole burst, the window times β = 0.7.
        Assert.InRange(minAfterBurst, cwndBeforeBurst * 65 / 100, cwndBeforeBurst * 75 / 100);
        // CUBIC's concave region: the window climbs back towards W_max (K is several seconds here, so not all the way).
        Assert.True(maxAfterMin > minAfterBurst * 11 / 10, $"the window did not grow back from {minAfterBurst}");
        Assert.True(transfer.GoodputBitsPerSecond > 0.9 * 50_000_000);
    }

    /// <summary>
    /// RFC 9000 §8.1.2 / §7.3: with RequireRetry the server answers the first Initial with a Retry; the client comes back
    /// with the token, the handshake completes, and the server's retry_source_connection_id is the Retry's SCID.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void HandshakeCompletesThroughRetry(bool realTls)
    {
        using var pair = new QuicPair(seed: 801, configure: p =>
        {
            p.RequireRetry = true;
            if (realTls) ConnectionTlsTests.UseRealTls(p);
        });
        byte[]? retryScid = null;
        int clientInitialsWithToken = 0;
        pair.Network.Interceptor = d =>
        {
            ReadOnlySpan<byte> data = d.Data;
            if ((data[0] & 0x80) == 0 || data.Length < 7) return InterceptAction.Pass;
            int type = (data[0] >> 4) & 3;
            int dcidLength = data[5];
            int scidLength = data[6 + dcidLength];
            if (d.From.Host == QuicPair.ServerHost && type == 3) retryScid = data.Slice(7 + dcidLength, scidLength).ToArray();
            if (d.From.Host == QuicPair.ClientHost && type == 0)
            {
                int tokenLengthOffset = 7 + dcidLength + scidLength;
                if (data[tokenLengthOffset] != 0) clientInitialsWithToken++;
            }
            return InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Assert.Equal(1, pair.ServerEndpoint.RetriesSent);
        Assert.NotNull(retryScid);
        Assert.True(clientInitialsWithToken > 0);
        Assert.Equal(retryScid, pair.ClientConnection!.PeerParameters!.RetrySourceConnectionId);
        var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 256 * 1024);
        transfer.Run(5_000_000);
        Assert.True(transfer.ReceivedFin && !transfer.Corrupted);
    }

    /// <summary>
    /// RFC 9000 §6: a client speaking only QUIC v2 meets a server that speaks only v1: the server answers with Version
    /// Negotiation listing v1, creates no connection, and the client gives up with VersionNegotiation.
    /// </summary>
    [Fact]
    public void UnsupportedVersionEndsWithVersionNegotiation()
    {
        using var pair = new QuicPair(seed: 802, configure: p =>
        {
            p.ServerSupportedVersions = new[] { QuicVersion.V1 };
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", Version = QuicVersion.V2, Streams = QuicPair.DefaultStreams };
        });
        var versionsOffered = new List<uint>();
        pair.Network.Interceptor = d =>
        {
            ReadOnlySpan<byte> data = d.Data;
            if (d.From.Host == QuicPair.ServerHost && (data[0] & 0x80) != 0 && BinaryPrimitives.ReadUInt32BigEndian(data.Slice(1)) == 0)
            {
                int dcidLength = data[5];
                int scidLength = data[6 + dcidLength];
                for (int i = 7 + dcidLength + scidLength; i + 4 <= data.Length; i += 4) versionsOffered.Add(BinaryPrimitives.ReadUInt32BigEndian(data.Slice(i)));
            }
            return InterceptAction.Pass;
        };
        Connection client = pair.Connect();
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 2_000_000);
        Assert.Equal(1, pair.ServerEndpoint.VersionNegotiationsSent);
        Assert.Equal(new[] { QuicVersion.V1 }, versionsOffered);
        Assert.Equal(ConnectionErrorSource.VersionNegotiation, client.Error!.Source);
        Assert.Empty(pair.ServerEndpoint.Connections);
        pair.RunUntil(() => false, 100_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
    }
}
