using System.Buffers.Binary;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// QUIC v2 (RFC 9369) end to end and compatible version negotiation (RFC 9368) on the simulated network: a v2 client,
/// a v1 client upgraded by a server preferring v2 (with loss and with Retry), no upgrade without the client's consent,
/// version_information on both sides.
/// </summary>
public class QuicVersion2Tests
{
    private static ConnectionOptions ClientOptions(int seed, uint version, uint[]? available) => new()
    {
        Random = new SeededRandomSource(seed * 2 + 1),
        Name = "client",
        MaxDatagramSize = 1452,
        Streams = QuicPair.DefaultStreams,
        Version = version,
        AvailableVersions = available,
    };

    /// <summary>Long-header versions seen on the wire, per direction, in order.</summary>
    private sealed class VersionLog
    {
        public List<uint> FromClient { get; } = new();
        public List<uint> FromServer { get; } = new();

        public InterceptAction Observe(InterceptedDatagram d)
        {
            if ((d.Data[0] & 0x80) != 0 && d.Length >= 5)
            {
                (d.From.Host == QuicPair.ClientHost ? FromClient : FromServer).Add(BinaryPrimitives.ReadUInt32BigEndian(d.Data.Slice(1)));
            }
            return InterceptAction.Pass;
        }
    }

    private static void Transfer(QuicPair pair)
    {
        var up = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 100_000);
        var down = new StreamTransfer(pair, pair.ServerConnection!, pair.ClientConnection!, 100_000);
        pair.RunUntil(() =>
        {
            up.Step();
            down.Step();
            pair.Network.PollAll();
            return up.Done && down.Done;
        }, 30_000_000);
        Assert.True(up.ReceivedFin && !up.Corrupted, "upload");
        Assert.True(down.ReceivedFin && !down.Corrupted, "download");
    }

    [Fact]
    public void Version2ClientCompletesHandshakeAndTransfer()
    {
        using var pair = new QuicPair(21, configure: p =>
        {
            ConnectionTlsTests.UseRealTls(p);
            p.ClientOptions = ClientOptions(21, QuicVersion.V2, null);
        });
        var log = new VersionLog();
        pair.Network.Interceptor = log.Observe;
        Assert.True(pair.Handshake());
        Assert.Equal(QuicVersion.V2, pair.ClientConnection!.Version);
        Assert.Equal(QuicVersion.V2, pair.ServerConnection!.Version);
        Assert.False(pair.ServerConnection.VersionChanged);
        Assert.All(log.FromClient, v => Assert.Equal(QuicVersion.V2, v));
        Assert.All(log.FromServer, v => Assert.Equal(QuicVersion.V2, v));
        // version_information on both sides (RFC 9368 §3).
        Assert.Equal(QuicVersion.V2, pair.ServerConnection.PeerParameters!.ChosenVersion);
        Assert.Equal(new[] { QuicVersion.V2 }, pair.ServerConnection.PeerParameters.AvailableVersions);
        Assert.Equal(QuicVersion.V2, pair.ClientConnection.PeerParameters!.ChosenVersion);
        Assert.Equal(new[] { QuicVersion.V1, QuicVersion.V2 }, pair.ClientConnection.PeerParameters.AvailableVersions);
        Transfer(pair);
    }

    [Theory]
    [InlineData(22, 0.0, false)]
    [InlineData(23, 0.2, false)] // the client's v1 Initials are repeated: the server still reads them after switching
    [InlineData(24, 0.2, false)]
    [InlineData(25, 0.0, true)] // Retry in v1, then the upgrade
    public void ServerPreferringVersion2UpgradesACompatibleClient(int seed, double loss, bool retry)
    {
        using var pair = new QuicPair(seed, new LinkConditions { DelayUs = 10_000, LossProbability = loss }, configure: p =>
        {
            ConnectionTlsTests.UseRealTls(p); // the server reads the client's version_information from its ClientHello
            p.ClientOptions = ClientOptions(seed, QuicVersion.V1, new[] { QuicVersion.V1, QuicVersion.V2 });
            p.ServerPreferredVersions = new[] { QuicVersion.V2, QuicVersion.V1 };
            p.RequireRetry = retry;
        });
        var log = new VersionLog();
        pair.Network.Interceptor = log.Observe;
        Assert.True(pair.Handshake(60_000_000));
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.Equal(QuicVersion.V2, client.Version);
        Assert.Equal(QuicVersion.V2, server.Version);
        Assert.Equal(QuicVersion.V1, client.OriginalVersion);
        Assert.True(server.VersionChanged && client.VersionChanged);
        Assert.Equal(1, pair.ServerEndpoint.CompatibleVersionUpgrades);
        Assert.Equal(QuicVersion.V1, log.FromClient[0]); // the first Initial offers v1 ...
        Assert.Contains(QuicVersion.V2, log.FromServer); // ... the answer comes in v2
        Assert.Equal(retry, server.Retried);
        // Downgrade protection inputs: the client chose v1 first and listed v2; the server chose v2.
        Assert.Equal(QuicVersion.V1, server.PeerParameters!.ChosenVersion);
        Assert.Equal(QuicVersion.V2, client.PeerParameters!.ChosenVersion);
        Transfer(pair);
    }

    [Fact]
    public void NoUpgradeWhenTheClientDoesNotListVersion2()
    {
        using var pair = new QuicPair(26, configure: p =>
        {
            ConnectionTlsTests.UseRealTls(p);
            p.ClientOptions = ClientOptions(26, QuicVersion.V1, null);
            p.ServerPreferredVersions = new[] { QuicVersion.V2, QuicVersion.V1 };
        });
        var log = new VersionLog();
        pair.Network.Interceptor = log.Observe;
        Assert.True(pair.Handshake());
        Assert.Equal(QuicVersion.V1, pair.ClientConnection!.Version);
        Assert.Equal(QuicVersion.V1, pair.ServerConnection!.Version);
        Assert.Equal(0, pair.ServerEndpoint.CompatibleVersionUpgrades);
        Assert.All(log.FromServer, v => Assert.Equal(QuicVersion.V1, v));
    }

    [Theory]
    [InlineData("1100")] // empty
    [InlineData("110300000001")] // not a multiple of 4
    [InlineData("110400000000")] // Chosen Version 0
    [InlineData("11080000000100000000")] // an Available Version 0
    public void MalformedVersionInformationIsATransportParameterError(string hex)
    {
        Assert.Equal(TransportErrorCode.TransportParameterError,
            TransportParameters.TryDecode(Convert.FromHexString(hex), sentByServer: true, out _, out string? reason));
        Assert.Contains("version_information", reason);
    }

    [Fact]
    public void VersionInformationRoundTrips()
    {
        var p = new TransportParameters { ChosenVersion = QuicVersion.V2, AvailableVersions = new[] { QuicVersion.V2, QuicVersion.V1 } };
        byte[] encoded = p.Encode()!;
        Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, sentByServer: true, out TransportParameters? back, out _));
        Assert.Equal(QuicVersion.V2, back!.ChosenVersion);
        Assert.Equal(new[] { QuicVersion.V2, QuicVersion.V1 }, back.AvailableVersions);
    }
}
