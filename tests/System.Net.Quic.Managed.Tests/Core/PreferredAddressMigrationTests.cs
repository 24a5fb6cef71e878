using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// RFC 9000 §9.6 (server's preferred address) and §9.2/§9.5 (active client migration to a new local socket) on the
/// deterministic simulator: the server has a second address (local path 1), the client a second socket (local path 1).
/// </summary>
public class PreferredAddressMigrationTests(ITestOutputHelper output)
{
    private static LinkConditions Link(double loss = 0) => new()
    {
        DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20, LossProbability = loss,
    };

    /// <summary>Records the DCIDs of the client's short-header packets per destination address.</summary>
    private sealed class DcidRecorder
    {
        public readonly Dictionary<SimAddress, HashSet<string>> ByDestination = new();
        public readonly Dictionary<SimAddress, long> ToAddress = new();
        public readonly Dictionary<SimAddress, long> FromAddress = new();

        public InterceptAction Record(InterceptedDatagram d)
        {
            ToAddress[d.To] = ToAddress.GetValueOrDefault(d.To) + 1;
            FromAddress[d.From] = FromAddress.GetValueOrDefault(d.From) + 1;
            if (d.From.Host == QuicPair.ClientHost && (d.Data[0] & 0x80) == 0)
            {
                var key = new SimAddress(d.From.Port, d.To.Port); // (client port, server port): one path each
                if (!ByDestination.TryGetValue(key, out HashSet<string>? set)) ByDestination[key] = set = new HashSet<string>();
                set.Add(Convert.ToHexString(d.Data.Slice(1, 8)));
            }
            return InterceptAction.Pass;
        }

        /// <summary>No connection ID was used on two paths (RFC 9000 §9.5).</summary>
        public void AssertNoIdOnTwoPaths()
        {
            var seen = new Dictionary<string, SimAddress>();
            foreach ((SimAddress path, HashSet<string> ids) in ByDestination)
            {
                foreach (string id in ids)
                {
                    Assert.False(seen.TryGetValue(id, out SimAddress other), $"DCID {id} used on path {other} and {path}");
                    seen[id] = path;
                }
            }
        }
    }

    private static QuicPair PairWithPreferredAddress(int seed, double loss = 0)
    {
        var pair = new QuicPair(seed, Link(loss));
        pair.AddServerPreferredAddress();
        return pair;
    }

    [Theory]
    [InlineData(0.0, 1100)]
    [InlineData(0.02, 1101)]
    public void ClientMovesToTheServersPreferredAddressAndTheTransferStaysByteExact(double loss, int seed)
    {
        using QuicPair pair = PairWithPreferredAddress(seed, loss);
        var recorder = new DcidRecorder();
        pair.Network.Interceptor = recorder.Record;
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ServerPreferredAddress), client.PreferredAddress);
        const long total = 3 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        var upload = new StreamTransfer(pair, client, server, total / 2);
        pair.RunUntil(() =>
        {
            download.Step();
            upload.Step();
            return download.Done && upload.Done;
        }, 60_000_000);
        output.WriteLine($"migration {client.MigrationState}, client remote {client.RemoteAddress}, server path {server.LocalPath}, " +
            $"from preferred {recorder.FromAddress.GetValueOrDefault(pair.ServerPreferredAddress)}, from original {recorder.FromAddress.GetValueOrDefault(pair.ServerAddress)}");
        Assert.False(download.Corrupted || upload.Corrupted);
        Assert.True(download.ReceivedFin && upload.ReceivedFin);
        Assert.Equal(1, pair.PreferredAddressMigrations);
        Assert.Equal(PathValidationState.Validated, client.MigrationState);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ServerPreferredAddress), client.RemoteAddress);
        Assert.Equal(1, client.LocalPath);
        Assert.Equal(1, server.LocalPath);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ClientPreferredPathAddress), server.RemoteAddress);
        Assert.True(recorder.FromAddress.GetValueOrDefault(pair.ServerPreferredAddress) > 1000, "the server did not send from its preferred address");
        recorder.AssertNoIdOnTwoPaths();
        Assert.Equal(ConnectionPhase.Open, client.Phase);
    }

    /// <summary>RFC 9000 §9.6.1 / §9.3.2: the preferred address does not answer: the client stays on (goes back to) the original path.</summary>
    [Fact]
    public void BlackholedPreferredAddressLeavesTheClientOnTheOriginalPath()
    {
        using QuicPair pair = PairWithPreferredAddress(1102);
        var recorder = new DcidRecorder();
        pair.Network.Interceptor = d =>
        {
            recorder.Record(d);
            return d.To == pair.ServerPreferredAddress || d.From == pair.ServerPreferredAddress ? InterceptAction.Drop : InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        const long total = 2 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        pair.RunUntil(download.Step, 60_000_000);
        output.WriteLine($"migration {client.MigrationState}, sent to the preferred address {recorder.ToAddress.GetValueOrDefault(pair.ServerPreferredAddress)}");
        Assert.True(download.ReceivedFin && !download.Corrupted);
        Assert.Equal(1, pair.PreferredAddressMigrations);
        Assert.Equal(PathValidationState.Failed, client.MigrationState);
        Assert.True(recorder.ToAddress.GetValueOrDefault(pair.ServerPreferredAddress) > 0);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ServerAddress), client.RemoteAddress);
        Assert.Equal(0, client.LocalPath);
        Assert.Equal(0, server.LocalPath);
        recorder.AssertNoIdOnTwoPaths();
    }

    /// <summary>RFC 9000 §9.6: a client may ignore the preferred address; its ID (sequence 1) is still a valid spare.</summary>
    [Fact]
    public void ClientThatDisablesPreferredAddressMigrationStays()
    {
        using var pair = new QuicPair(1103, Link());
        pair.AddServerPreferredAddress();
        pair.ClientOptions = new ConnectionOptions
        {
            Random = new SeededRandomSource(1103 * 2 + 1), Name = "client", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams,
            DisablePreferredAddressMigration = true,
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        var download = new StreamTransfer(pair, pair.ServerConnection!, client, 1 << 20);
        pair.RunUntil(download.Step, 30_000_000);
        Assert.True(download.ReceivedFin && !download.Corrupted);
        Assert.Equal(0, pair.PreferredAddressMigrations);
        Assert.Equal(PathValidationState.Idle, client.MigrationState);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ServerAddress), client.RemoteAddress);
        Assert.True(client.PeerConnectionIdCount >= 2);
    }

    /// <summary>RFC 9000 §9.2 / §9.5: the client moves to a new socket in the middle of a lossy transfer; nothing is lost.</summary>
    [Fact]
    public void ActiveMigrationToANewSocketMidTransferWithLossIsByteExact()
    {
        using var pair = new QuicPair(1104, Link(0.02));
        var recorder = new DcidRecorder();
        pair.Network.Interceptor = recorder.Record;
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 1, 2_000_000);
        const long total = 3 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        var upload = new StreamTransfer(pair, client, server, total);
        var newAddress = new SimAddress(QuicPair.ClientHost, 50200);
        bool migrated = false;
        pair.RunUntil(() =>
        {
            download.Step();
            upload.Step();
            if (!migrated && download.Received > total / 3)
            {
                pair.Client.AddPath(pair.Network, 1, newAddress);
                Assert.True(client.MigrateLocalPath(1, pair.Network.NowUs));
                migrated = true;
            }
            return download.Done && upload.Done;
        }, 60_000_000);
        Assert.True(migrated);
        Assert.False(download.Corrupted || upload.Corrupted);
        Assert.True(download.ReceivedFin && upload.ReceivedFin);
        Assert.Equal(PathValidationState.Validated, client.MigrationState);
        Assert.Equal(1, client.LocalPath);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(newAddress), server.RemoteAddress);
        Assert.True(recorder.ToAddress.GetValueOrDefault(newAddress) > 1000, "the server did not move to the client's new address");
        recorder.AssertNoIdOnTwoPaths();
        Assert.Equal(2, recorder.ByDestination.Count);
    }

    /// <summary>The client's new socket is blackholed: validation fails, the client goes back to its old socket and completes.</summary>
    [Fact]
    public void FailedActiveMigrationGoesBackToTheOldPath()
    {
        using var pair = new QuicPair(1105, Link());
        var newAddress = new SimAddress(QuicPair.ClientHost, 50201);
        var recorder = new DcidRecorder();
        pair.Network.Interceptor = d =>
        {
            recorder.Record(d);
            return d.From == newAddress || d.To == newAddress ? InterceptAction.Drop : InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 2, 2_000_000);
        const long total = 2 << 20;
        var download = new StreamTransfer(pair, pair.ServerConnection!, client, total);
        bool migrated = false;
        pair.RunUntil(() =>
        {
            download.Step();
            if (!migrated && download.Received > total / 4)
            {
                pair.Client.AddPath(pair.Network, 1, newAddress);
                Assert.True(client.MigrateLocalPath(1, pair.Network.NowUs));
                migrated = true;
            }
            return download.Done;
        }, 60_000_000);
        Assert.True(download.ReceivedFin && !download.Corrupted);
        Assert.Equal(PathValidationState.Failed, client.MigrationState);
        Assert.Equal(0, client.LocalPath);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ClientAddress), pair.ServerConnection!.RemoteAddress);
        recorder.AssertNoIdOnTwoPaths();
    }

    /// <summary>RFC 9000 §18.2: the server sent disable_active_migration: the client refuses to migrate (it may still use a preferred address).</summary>
    [Fact]
    public void PeerDisableActiveMigrationIsRespected()
    {
        using var pair = new QuicPair(1106, Link());
        pair.ServerOptions = new ConnectionOptions
        {
            Random = new SeededRandomSource(1106 * 2 + 2), Name = "server", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams,
            DisableActiveMigration = true,
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 1, 2_000_000);
        Assert.True(client.PeerParameters!.DisableActiveMigration);
        Assert.False(client.PeerAllowsActiveMigration);
        pair.Client.AddPath(pair.Network, 1, new SimAddress(QuicPair.ClientHost, 50202));
        Assert.False(client.MigrateLocalPath(1, pair.Network.NowUs));
        Assert.Equal(0, client.LocalPath);
        Assert.Equal(0, client.MigrationsStarted);
    }

    /// <summary>§18.2: disable_active_migration does not forbid the preferred address, and after moving there migration is allowed.</summary>
    [Fact]
    public void DisableActiveMigrationStillAllowsThePreferredAddress()
    {
        using var pair = new QuicPair(1107, Link());
        pair.ServerOptions = new ConnectionOptions { DisableActiveMigration = true, Random = new SeededRandomSource(1), Streams = QuicPair.DefaultStreams };
        pair.AddServerPreferredAddress();
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.MigrationState == PathValidationState.Validated, 2_000_000);
        Assert.Equal(PathValidationState.Validated, client.MigrationState);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ServerPreferredAddress), client.RemoteAddress);
        Assert.True(client.PeerAllowsActiveMigration);
    }

    /// <summary>The server issues the preferred address's ID as sequence 1 with its own reset token, and routes it.</summary>
    [Fact]
    public void ServerAdvertisesSequenceOneWithItsResetToken()
    {
        using QuicPair pair = PairWithPreferredAddress(1108);
        Assert.True(pair.Handshake());
        Connection server = pair.ServerConnection!;
        System.Net.Quic.Managed.Wire.PreferredAddress advertised = pair.ClientConnection!.PeerParameters!.PreferredAddress!;
        Assert.Equal(pair.ServerPreferredAddress.ToIPEndPoint(), advertised.IPv4EndPoint);
        Assert.Null(advertised.IPv6EndPoint);
        System.Net.Quic.Managed.Ids.IssuedConnectionId sequenceOne = server.LocalIds.Active.Single(i => i.SequenceNumber == 1);
        Assert.Equal(sequenceOne.Id.Span.ToArray(), advertised.ConnectionId);
        byte[] token = new byte[16];
        sequenceOne.ResetToken.CopyTo(token);
        Assert.Equal(token, advertised.StatelessResetToken);
    }
}
