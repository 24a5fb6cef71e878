using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// ECN and path MTU discovery through real sockets on loopback (managed provider): the kernel carries the ECT(0) marks we
/// set with IP_TOS and hands them back through IP_RECVTOS, and loopback's 64 KiB MTU lets the probes raise the datagram size.
/// </summary>
public class PathSignalsApiTests
{
    private static async Task<(QuicConnectionStatistics Client, QuicConnectionStatistics Server)> TransferAsync(
        Action<QuicServerConnectionOptions>? configureServer, Action<QuicClientConnectionOptions>? configureClient)
    {
        QuicConnectionStatistics? clientStats = null, serverStats = null;
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            byte[] payload = new byte[512 * 1024];
            new Random(15).NextBytes(payload);
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            Task write = Task.Run(async () =>
            {
                await stream.WriteAsync(payload, ct);
                stream.CompleteWrites();
            }, ct);
            await using QuicStream accepted = await server.AcceptInboundStreamAsync(ct);
            byte[] received = await ReadToEndAsync(accepted, ct);
            await write;
            Assert.Equal(payload, received);
            // A short pause: the last ACKs (with their ECN counts) reach the client, and the snapshots catch up.
            for (int i = 0; i < 50 && !(client.GetStatistics().EcnValidated && client.GetStatistics().PathMaxDatagramSize > 1200); i++) await Task.Delay(20, ct);
            clientStats = client.GetStatistics();
            serverStats = server.GetStatistics();
        }, configureServer, configureClient);
        return (clientStats!, serverStats!);
    }

    [SkippableFact]
    public async Task LoopbackCarriesEcnMarksBothWaysAndRaisesThePathMtu()
    {
        Skip.IfNot(OperatingSystem.IsLinux() && !global::System.Net.Quic.Managed.Io.UdpReceiver.BatchingDisabledByConfiguration, "IP_TOS / IP_RECVTOS through recvmmsg: Linux, not the portable path");
        var (client, server) = await TransferAsync(s => s.MaxPathDatagramSize = 4096, c => c.MaxPathDatagramSize = 4096);

        // The server received our ECT(0) packets (IP_RECVTOS) and reported them back in ACK_ECN frames: ECN validated.
        Assert.True(server.EcnEct0PacketsReceived > 100, $"server saw {server.EcnEct0PacketsReceived} ECT(0) packets");
        Assert.True(client.EcnEct0PacketsReportedByPeer > 0);
        Assert.True(client.EcnValidated);
        Assert.Equal(0, client.EcnCePacketsReportedByPeer);
        // The server's marks reached the client too.
        Assert.True(client.EcnEct0PacketsReceived > 0);
        // Loopback's MTU is 64 KiB: the first probe (the maximum asked for) gets through.
        Assert.Equal(4096, client.PathMaxDatagramSize);
        Assert.Equal(4096, server.PathMaxDatagramSize);
    }

    [SkippableFact]
    public async Task DisabledEcnSendsNoMarksAndDefaultDiscoveryReachesTheLoopbackCeiling()
    {
        Skip.IfNot(OperatingSystem.IsLinux() && !global::System.Net.Quic.Managed.Io.UdpReceiver.BatchingDisabledByConfiguration, "IP_TOS / IP_RECVTOS through recvmmsg: Linux, not the portable path");
        var (client, server) = await TransferAsync(null, c => c.EnableEcn = false);
        Assert.Equal(0, server.EcnEct0PacketsReceived);
        Assert.False(client.EcnValidated);
        // Towards a loopback address the default ceiling is 16,000 bytes, and loopback's 64 KiB MTU carries it. (The
        // server only acknowledges here: its congestion window, 10 initial datagrams, never grows to hold such a probe.)
        Assert.Equal(QuicConnectionOptions.LoopbackMaxPathDatagramSize, client.PathMaxDatagramSize);
    }
}
