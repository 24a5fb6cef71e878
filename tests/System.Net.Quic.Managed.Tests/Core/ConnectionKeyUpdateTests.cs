using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionKeyUpdateTests(ITestOutputHelper output)
{
    /// <summary>
    /// RFC 9001 §6: key updates started alternately by the client and the server in the middle of a transfer
    /// with loss and reordering (packets of the old phase still arrive after the update); every byte arrives and both
    /// sides count every update (the initiator when it starts it, the responder when it sees the new phase).
    /// </summary>
    [Fact]
    public void RepeatedKeyUpdatesFromBothSidesMidTransfer()
    {
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20,
            LossProbability = 0.02, ReorderProbability = 0.05, ReorderExtraDelayUs = 4_000 };
        using var pair = new QuicPair(seed: 500, link);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        const long total = 6 << 20;
        var transfer = new StreamTransfer(pair, client, server, total);
        int updates = 0;
        long nextThreshold = 512 * 1024;
        transfer.Run(0);
        pair.RunUntil(() =>
        {
            bool done = transfer.Step();
            if (!done && transfer.Received >= nextThreshold)
            {
                Connection initiator = updates % 2 == 0 ? client : server;
                if (initiator.InitiateKeyUpdate())
                {
                    updates++;
                    nextThreshold += 512 * 1024;
                }
            }
            return done;
        }, 60_000_000);
        output.WriteLine($"{updates} key updates; client counted {client.Statistics.KeyUpdates}, server {server.Statistics.KeyUpdates}; lost {client.Statistics.PacketsLost}");
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin, $"only {transfer.Received} of {total} bytes arrived");
        Assert.True(updates >= 6, $"only {updates} updates");
        // The last update may still be travelling when the transfer ends: let it arrive.
        pair.RunUntil(() => client.Statistics.KeyUpdates == updates && server.Statistics.KeyUpdates == updates, 1_000_000);
        Assert.Equal(updates, client.Statistics.KeyUpdates);
        Assert.Equal(updates, server.Statistics.KeyUpdates);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
        Assert.Equal(ConnectionPhase.Open, server.Phase);
    }

    /// <summary>
    /// RFC 9001 §6.1 with the real TLS engine: the next secrets come from the negotiated suite's hash ("quic ku"), so each
    /// suite (SHA-256 and SHA-384 based, AES-GCM and ChaCha20) is updated several times in both directions mid-transfer.
    /// </summary>
    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)]
    public void KeyUpdatesWithRealTlsForEachCipherSuite(TlsCipherSuite suite)
    {
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20, LossProbability = 0.01 };
        using var pair = new QuicPair(seed: 503, link, configure: p => ConnectionTlsTests.UseRealTls(p, suite: suite));
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.Equal(suite, client.Handshake.NegotiatedCipherSuite);
        const long total = 2 << 20;
        var upload = new StreamTransfer(pair, client, server, total);
        var download = new StreamTransfer(pair, server, client, total);
        int updates = 0;
        pair.RunUntil(() =>
        {
            bool done = upload.Step() & download.Step();
            if (!done && upload.Received >= (updates + 1) * (total / 6) && (updates % 2 == 0 ? client : server).InitiateKeyUpdate()) updates++;
            return done;
        }, 30_000_000);
        Assert.True(upload.ReceivedFin && download.ReceivedFin);
        Assert.False(upload.Corrupted || download.Corrupted);
        Assert.True(updates >= 4, $"only {updates} updates");
        pair.RunUntil(() => client.Statistics.KeyUpdates == updates && server.Statistics.KeyUpdates == updates, 1_000_000);
        Assert.Equal(updates, client.Statistics.KeyUpdates);
        Assert.Equal(updates, server.Statistics.KeyUpdates);
    }

    /// <summary>RFC 9001 §6.1: no key update before the handshake is confirmed, nor before the current phase was acknowledged.</summary>
    [Fact]
    public void KeyUpdateIsRefusedBeforeConfirmationAndUntilThePreviousOneIsAcknowledged()
    {
        using var pair = new QuicPair(seed: 501);
        Connection client = pair.Connect();
        Assert.False(client.InitiateKeyUpdate());
        pair.RunUntil(() => client.IsHandshakeComplete, 1_000_000);
        Assert.True(client.IsHandshakeComplete);
        Assert.False(client.IsHandshakeConfirmed); // HANDSHAKE_DONE is still on its way
        Assert.False(client.InitiateKeyUpdate());
        pair.RunUntil(() => client.IsHandshakeConfirmed, 1_000_000);
        // Get a 1-RTT packet acknowledged, then update once; a second update must wait for an ACK in the new phase.
        Assert.True(client.TryOpenStream(false, out long id));
        client.WriteStream(id, new byte[100], fin: false);
        pair.RunUntil(() => false, 200_000);
        Assert.True(client.InitiateKeyUpdate());
        Assert.False(client.InitiateKeyUpdate());
        client.WriteStream(id, new byte[100], fin: true);
        pair.RunUntil(() => false, 200_000);
        Assert.Equal(1, pair.ServerConnection!.Statistics.KeyUpdates);
        Assert.True(client.InitiateKeyUpdate());
        Assert.Equal(2, client.Statistics.KeyUpdates);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
    }

    /// <summary>
    /// RFC 9001 §6.1: a key update may not come before the handshake is confirmed. The server (with a test hook that skips
    /// its own checks) switches phase as soon as its handshake completes, and the datagrams of that moment, which carry
    /// HANDSHAKE_DONE in the old phase, are lost: the client, not yet confirmed, sees the new phase and closes with
    /// KEY_UPDATE_ERROR.
    /// </summary>
    [Fact]
    public void PrematureKeyUpdateByThePeerClosesWithKeyUpdateError()
    {
        using var pair = new QuicPair(seed: 502);
        long forcedAtUs = -1;
        pair.Network.Interceptor = d =>
        {
            if (d.From.Host != QuicPair.ServerHost || (d.Data[0] & 0x80) != 0) return InterceptAction.Pass;
            Connection? server = pair.ServerConnection ?? (pair.ServerEndpoint.Connections.Count > 0 ? pair.ServerEndpoint.Connections[0] : null);
            if (forcedAtUs < 0 && server is { IsHandshakeComplete: true })
            {
                server.ForceKeyUpdateForTesting();
                forcedAtUs = d.NowUs;
            }
            return forcedAtUs == d.NowUs ? InterceptAction.Drop : InterceptAction.Pass;
        };
        Connection client = pair.Connect();
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 3_000_000);
        Assert.True(forcedAtUs >= 0);
        Assert.False(client.IsHandshakeConfirmed);
        Assert.Equal(ConnectionErrorSource.Transport, client.Error!.Source);
        Assert.Equal((ulong)TransportErrorCode.KeyUpdateError, client.Error.Code);
        Assert.False(client.Error.ByPeer);
        Connection serverConnection = pair.ServerEndpoint.Connections[0];
        pair.RunUntil(() => serverConnection.Phase != ConnectionPhase.Open, 1_000_000);
        Assert.Equal((ulong)TransportErrorCode.KeyUpdateError, serverConnection.Error!.Code);
        Assert.True(serverConnection.Error.ByPeer);
    }
}
