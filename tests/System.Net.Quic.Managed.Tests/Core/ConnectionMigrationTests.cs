using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Ids;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionMigrationTests(ITestOutputHelper output)
{
    private static byte[] ShortHeaderDcid(InterceptedDatagram d) => d.Data.Slice(1, 8).ToArray();

    /// <summary>A pair over a 20 ms RTT, 50 Mbit/s link whose handshake is confirmed.</summary>
    private static QuicPair ConfirmedPair(int seed, out Connection client, out Connection server)
    {
        var pair = new QuicPair(seed, new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20 });
        Assert.True(pair.Handshake());
        Connection c = client = pair.ClientConnection!;
        server = pair.ServerConnection!;
        pair.RunUntil(() => c.IsHandshakeConfirmed, 1_000_000);
        return pair;
    }

    /// <summary>
    /// RFC 9000 §9.3: the client's NAT gives it a new port in the middle of a transfer. The server notices the new
    /// address on the next packet, validates it with PATH_CHALLENGE/PATH_RESPONSE, sends there, and the transfer completes.
    /// </summary>
    [Fact]
    public void NatRebindingMidTransferIsValidatedAndTheTransferCompletes()
    {
        using QuicPair pair = ConfirmedPair(700, out Connection client, out Connection server);
        const long total = 4 << 20;
        // Both directions: the client uploads, the server downloads, so both notice the rebinding.
        var upload = new StreamTransfer(pair, client, server, total);
        var download = new StreamTransfer(pair, server, client, total);
        var newAddress = new SimAddress(QuicPair.ClientHost, 50001);
        bool rebound = false;
        long serverToNewPort = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host == QuicPair.ServerHost && d.To == newAddress) serverToNewPort++;
            return InterceptAction.Pass;
        };
        pair.RunUntil(() =>
        {
            upload.Step();
            download.Step();
            if (!rebound && upload.Received > total / 3)
            {
                pair.Network.Rebind(pair.Client, newAddress);
                rebound = true;
            }
            return upload.Done && download.Done;
        }, 60_000_000);
        output.WriteLine($"server validations {server.PathValidations}, datagrams to the new port {serverToNewPort}, server remote {server.RemoteAddress}");
        Assert.True(rebound);
        Assert.False(upload.Corrupted || download.Corrupted);
        Assert.True(upload.ReceivedFin && download.ReceivedFin);
        Assert.Equal(1, server.PathValidations);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(newAddress), server.RemoteAddress);
        Assert.True(serverToNewPort > 100);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
    }

    /// <summary>
    /// RFC 9000 §8.2.1 / §9.3: the first datagrams the server sends to the client's new address (with its PATH_CHALLENGE)
    /// are lost. The server must challenge again rather than give up on a path that works, and must not fall back to
    /// the old address, where nobody listens any more.
    /// </summary>
    [Fact]
    public void NatRebindingSurvivesTheLossOfThePathChallenge()
    {
        using QuicPair pair = ConfirmedPair(702, out Connection client, out Connection server);
        const long total = 2 << 20;
        var upload = new StreamTransfer(pair, client, server, total);
        SimAddress oldAddress = pair.ClientAddress, newAddress = new(QuicPair.ClientHost, 50003);
        bool rebound = false, serverSwitched = false;
        long toNewPort = 0, toOldAfterSwitch = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host != QuicPair.ServerHost) return InterceptAction.Pass;
            if (d.To == newAddress && toNewPort++ < 3) return InterceptAction.Drop;
            if (serverSwitched && d.To == oldAddress) toOldAfterSwitch++;
            return InterceptAction.Pass;
        };
        pair.RunUntil(() =>
        {
            bool done = upload.Step();
            if (!rebound && upload.Received > total / 4)
            {
                pair.Network.Rebind(pair.Client, newAddress);
                rebound = true;
            }
            serverSwitched |= server.RemoteAddress == SimulatedQuicEndpoint.ToNetwork(newAddress);
            return done;
        }, 30_000_000);
        output.WriteLine($"server validations {server.PathValidations}, datagrams to the new port {toNewPort}, to the old one after the switch {toOldAfterSwitch}");
        Assert.True(upload.ReceivedFin && !upload.Corrupted);
        Assert.Equal(1, server.PathValidations);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(newAddress), server.RemoteAddress);
        Assert.Equal(0, toOldAfterSwitch);
    }

    /// <summary>
    /// RFC 9000 §9.3 / §8: an attacker forwards one of the client's packets with a victim's source address. The server
    /// moves to the victim's address but, the address not being validated, sends it at most three times what came from
    /// it; the real client's next packets bring the connection back and the download completes byte-exact.
    /// </summary>
    [Fact]
    public void AForwardedPacketWithASpoofedSourceGetsAtMostThreeTimesItsSizeBeforeValidation()
    {
        using QuicPair pair = ConfirmedPair(704, out Connection client, out Connection server);
        const long total = 2 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        var victim = new SimAddress(QuicPair.ClientHost, 50009);
        bool spoofed = false;
        long spoofedBytes = 0, toVictim = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.To == victim) toVictim += d.Data.Length;
            if (!spoofed && d.From == pair.ClientAddress && download.Received > total / 3)
            {
                spoofed = true;
                spoofedBytes = d.Data.Length;
                pair.Network.Inject(victim, d.To, d.Data, pair.Network.NowUs + 1_000);
                return InterceptAction.Drop;
            }
            return InterceptAction.Pass;
        };
        pair.RunUntil(() => download.Step(), 60_000_000);
        output.WriteLine($"spoofed datagram {spoofedBytes} B, server sent the victim {toVictim} B, validations {server.PathValidations}");
        Assert.True(spoofed);
        Assert.True(download.ReceivedFin && !download.Corrupted);
        Assert.True(toVictim > 0, "the server answered the spoofed address at all (the test exercised the path change)");
        Assert.True(toVictim <= 3 * spoofedBytes, $"{toVictim} B sent to an unvalidated address after receiving {spoofedBytes} B from it");
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(pair.ClientAddress), server.RemoteAddress);
    }

    /// <summary>
    /// RFC 9000 §8.2.1 / §8.2.2: datagrams carrying PATH_CHALLENGE or PATH_RESPONSE are expanded to at least 1200 bytes.
    /// In a download the client otherwise sends only small ACK datagrams: after its NAT rebinding, the datagram with its
    /// PATH_RESPONSE is the one of 1200 bytes or more.
    /// </summary>
    [Fact]
    public void PathResponseDatagramsArePaddedTo1200Bytes()
    {
        using QuicPair pair = ConfirmedPair(705, out Connection client, out Connection server);
        const long total = 2 << 20;
        var download = new StreamTransfer(pair, server, client, total);
        var newAddress = new SimAddress(QuicPair.ClientHost, 50010);
        bool rebound = false;
        int largeFromNewAddress = 0;
        pair.Network.Interceptor = d =>
        {
            if (d.From == newAddress && d.Data.Length >= Connection.MinInitialDatagramSize) largeFromNewAddress++;
            return InterceptAction.Pass;
        };
        pair.RunUntil(() =>
        {
            bool done = download.Step();
            if (!rebound && download.Received > total / 3)
            {
                pair.Network.Rebind(pair.Client, newAddress);
                rebound = true;
            }
            return done;
        }, 60_000_000);
        output.WriteLine($"client datagrams of 1200+ bytes from the new address: {largeFromNewAddress}; validations {server.PathValidations}");
        Assert.True(download.ReceivedFin && !download.Corrupted);
        Assert.Equal(1, server.PathValidations);
        Assert.True(largeFromNewAddress >= 1);
    }

    /// <summary>
    /// RFC 9000 §9.4: on a new path the congestion controller starts over (initial window, slow start), unless only the
    /// peer's port changed (NAT rebinding), where the old state still describes the path. Both halves, each controller.
    /// </summary>
    [Theory]
    [InlineData("cubic")]
    [InlineData("newreno")]
    [InlineData("bbr")]
    public void ANewLocalPathRestartsTheCongestionControllerAPortOnlyRebindingDoesNot(string algorithm)
    {
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20 };
        CongestionControlAlgorithm cc = algorithm switch
        {
            "newreno" => CongestionControlAlgorithm.NewReno,
            "bbr" => CongestionControlAlgorithm.Bbr,
            _ => CongestionControlAlgorithm.Cubic,
        };
        using var pair = new QuicPair(706, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams, CongestionControl = cc };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams, CongestionControl = cc };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 1, 2_000_000);
        const long total = 4 << 20;
        var upload = new StreamTransfer(pair, client, server, total);
        var download = new StreamTransfer(pair, server, client, total);
        long initial = System.Net.Quic.Managed.Recovery.RecoveryConstants.InitialWindow(client.CongestionController.MaxDatagramSize);
        var rebound = new SimAddress(QuicPair.ClientHost, 50011);
        bool didRebind = false, didMigrate = false;
        long serverWindowAtRebind = -1, serverWindowAfterRebind = -1, clientWindowBeforeMigration = -1, clientWindowAfterMigration = -1;
        pair.RunUntil(() =>
        {
            upload.Step();
            download.Step();
            if (!didRebind && download.Received > total / 4)
            {
                serverWindowAtRebind = server.CongestionController.CongestionWindow;
                pair.Network.Rebind(pair.Client, rebound); // port only
                didRebind = true;
            }
            if (didRebind && serverWindowAfterRebind < 0 && server.RemoteAddress == SimulatedQuicEndpoint.ToNetwork(rebound))
            {
                serverWindowAfterRebind = server.CongestionController.CongestionWindow;
            }
            if (!didMigrate && serverWindowAfterRebind >= 0 && upload.Received > total / 2)
            {
                clientWindowBeforeMigration = client.CongestionController.CongestionWindow;
                pair.Client.AddPath(pair.Network, 1, new SimAddress(QuicPair.ClientHost, 50012));
                Assert.True(client.MigrateLocalPath(1, pair.Network.NowUs));
                clientWindowAfterMigration = client.CongestionController.CongestionWindow;
                didMigrate = true;
            }
            return upload.Done && download.Done;
        }, 60_000_000);
        output.WriteLine($"{algorithm}: server window {serverWindowAtRebind} -> {serverWindowAfterRebind} on the port change; client {clientWindowBeforeMigration} -> {clientWindowAfterMigration} on the new local path (initial {initial})");
        Assert.True(didMigrate);
        Assert.False(upload.Corrupted || download.Corrupted);
        Assert.True(upload.ReceivedFin && download.ReceivedFin);
        Assert.True(serverWindowAtRebind > 2 * initial, "the window grew before the rebinding");
        Assert.True(serverWindowAfterRebind > 2 * initial, "a port-only change keeps the congestion state");
        Assert.True(clientWindowBeforeMigration > 2 * initial, "the window grew before the migration");
        Assert.Equal(initial, clientWindowAfterMigration);
    }

    /// <summary>
    /// RFC 9000 §9.5: a client that migrates on purpose (new local address) switches to a connection ID the server issued
    /// but that was never used, validates the path, and retires the old ID (RETIRE_CONNECTION_ID), so the server stops
    /// routing it and issues a replacement.
    /// </summary>
    [Fact]
    public void ClientMigrationUsesAFreshConnectionIdAndRetiresTheOldOne()
    {
        using var pair = new QuicPair(seed: 701);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 1, 1_000_000);
        const long total = 2 << 20;
        var upload = new StreamTransfer(pair, client, server, total);
        var dcids = new List<byte[]>();
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host == QuicPair.ClientHost && (d.Data[0] & 0x80) == 0)
            {
                byte[] dcid = ShortHeaderDcid(d);
                if (dcids.Count == 0 || !dcids[^1].AsSpan().SequenceEqual(dcid)) dcids.Add(dcid);
            }
            return InterceptAction.Pass;
        };
        bool migrated = false;
        var newAddress = new SimAddress(QuicPair.ClientHost, 50002);
        pair.RunUntil(() =>
        {
            bool done = upload.Step();
            if (!migrated && upload.Received > total / 3)
            {
                pair.Network.Rebind(pair.Client, newAddress);
                Assert.True(client.MigrateLocalAddress(pair.Network.NowUs));
                migrated = true;
            }
            return done;
        }, 30_000_000);
        Assert.True(upload.ReceivedFin && !upload.Corrupted);
        pair.RunUntil(() => false, 300_000);
        Assert.Equal(2, dcids.Count); // one ID before the migration, a different one after
        Assert.False(dcids[0].AsSpan().SequenceEqual(dcids[1]));
        Assert.True(client.PathValidations >= 1, "the client did not validate its new path");
        Assert.True(server.PathValidations >= 1, "the server did not validate the client's new address");
        // The old ID was retired: the server no longer holds it, but does hold the new one, and issued a replacement.
        bool HasId(byte[] id)
        {
            foreach (IssuedConnectionId issued in server.LocalIds.Active)
            {
                if (issued.Id.Span.SequenceEqual(id)) return true;
            }
            return false;
        }
        Assert.False(HasId(dcids[0]), "RETIRE_CONNECTION_ID for the old ID did not arrive");
        Assert.True(HasId(dcids[1]));
        Assert.Equal(4, server.LocalIds.ActiveCount);
        Assert.Equal(SimulatedQuicEndpoint.ToNetwork(newAddress), server.RemoteAddress);
    }
}
