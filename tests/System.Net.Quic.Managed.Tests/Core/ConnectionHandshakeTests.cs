using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionHandshakeTests
{
    [Fact]
    public void HandshakeCompletesAndIsConfirmedOnBothSides()
    {
        using var pair = new QuicPair(seed: 1);
        Assert.True(pair.Handshake());
        pair.RunUntil(() => pair.ClientConnection!.IsHandshakeConfirmed, 1_000_000);
        Assert.True(pair.ClientConnection!.IsHandshakeConfirmed);
        Assert.True(pair.ServerConnection!.IsHandshakeConfirmed);
        Assert.Equal(ConnectionPhase.Open, pair.ClientConnection.Phase);
        // One RTT is 20 ms here: the handshake takes about one and a half round trips.
        Assert.InRange(pair.Network.NowUs, 20_000, 100_000);
        Assert.NotNull(pair.ClientConnection.PeerParameters);
        Assert.Equal(100UL, pair.ClientConnection.PeerParameters!.InitialMaxStreamsBidi);
    }

    [Fact]
    public void ClientInitialDatagramsArePaddedTo1200Bytes()
    {
        using var pair = new QuicPair(seed: 2);
        var sizes = new List<int>();
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host == QuicPair.ClientHost && (d.Data[0] & 0x80) != 0 && ((d.Data[0] >> 4) & 3) == 0) sizes.Add(d.Length);
            return InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Assert.NotEmpty(sizes);
        Assert.All(sizes, s => Assert.True(s >= 1200, $"client Initial datagram of {s} bytes"));
    }

    [Fact]
    public void HandshakeFailureClosesWithCryptoError()
    {
        using var pair = new QuicPair(seed: 3, configure: p => p.ServerHandshakeFactory = () => new FakeCryptoHandshake(true) { FailWithAlert = 40 });
        pair.Connect();
        pair.RunUntil(() => pair.ClientConnection!.Phase != ConnectionPhase.Open, 5_000_000);
        ConnectionError? error = pair.ClientConnection!.Error;
        Assert.NotNull(error);
        Assert.True(error!.ByPeer);
        Assert.Equal(0x100UL + 40, error.Code); // CRYPTO_ERROR + handshake_failure (RFC 9001 §4.8)
    }

    [Fact]
    public void HandshakeTimesOutWhenTheServerIsUnreachable()
    {
        using var pair = new QuicPair(seed: 4, new LinkConditions { DelayUs = 10_000, LossProbability = 1.0 });
        pair.ClientOptions = new ConnectionOptions { HandshakeTimeoutUs = 2_000_000, Random = pair.ClientOptions.Random };
        pair.Connect();
        pair.RunUntil(() => pair.ClientConnection!.Phase != ConnectionPhase.Open, 10_000_000);
        Assert.Equal(ConnectionErrorSource.HandshakeTimeout, pair.ClientConnection!.Error!.Source);
        Assert.InRange(pair.Network.NowUs, 2_000_000, 2_100_000);
    }

    [Theory]
    [InlineData(5)]
    [InlineData(6)]
    public void SameSeedGivesTheSameRun(int seed)
    {
        ulong Run()
        {
            using var pair = new QuicPair(seed, new LinkConditions { DelayUs = 10_000, LossProbability = 0.1, ReorderProbability = 0.1, ReorderExtraDelayUs = 5000 });
            pair.Network.TraceEnabled = true;
            pair.Handshake();
            pair.RunUntil(() => false, 500_000);
            return pair.Network.TraceFingerprint();
        }
        Assert.Equal(Run(), Run());
    }
}
