using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tests.Api;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>
/// Client connections share a few loop threads (one per processor) instead of a thread each: many connections in one
/// process all work, use no more loop threads than configured, and each leaves its loop when disposed.
/// </summary>
public class UdpDriverLoopTests
{
    [Fact]
    public async Task ManyClientConnectionsShareTheLoopsAndAllTransfer()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using QuicListener listener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed);
        const int Connections = 24;
        var clients = new List<QuicConnection>();
        var servers = new List<QuicConnection>();
        try
        {
            for (int i = 0; i < Connections; i++)
            {
                var (client, server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, listener);
                clients.Add(client);
                servers.Add(server);
            }

            var loops = clients.Select(c => ((ManagedConnection)c.Impl).Host.Driver.Loop).ToList();
            Assert.All(loops, Assert.NotNull);
            int distinct = loops.Distinct().Count();
            Assert.InRange(distinct, 1, Math.Max(1, UdpDriverLoop.ClientLoopCount));

            // Every connection moves data both ways at the same time.
            byte[] payload = new byte[64 * 1024];
            new Random(7).NextBytes(payload);
            await Task.WhenAll(Enumerable.Range(0, Connections).Select(async i =>
            {
                await using QuicStream stream = await clients[i].OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
                await stream.WriteAsync(payload, completeWrites: true, timeout.Token);
                await using QuicStream accepted = await servers[i].AcceptInboundStreamAsync(timeout.Token);
                byte[] received = await QuicApiTestEnvironment.ReadToEndAsync(accepted, timeout.Token);
                Assert.Equal(payload, received);
                await accepted.WriteAsync(received, completeWrites: true, timeout.Token);
                Assert.Equal(payload, await QuicApiTestEnvironment.ReadToEndAsync(stream, timeout.Token));
            }));
        }
        finally
        {
            foreach (QuicConnection c in clients) await c.DisposeAsync();
            foreach (QuicConnection s in servers) await s.DisposeAsync();
        }

        // Disposed connections leave their loop (their sockets close once the closing period ends).
        foreach (QuicConnection c in clients)
        {
            ManagedDriverHost host = ((ManagedConnection)c.Impl).Host;
            Assert.True(SpinWait.SpinUntil(() => host.IsReleased && !host.Driver.IsRunning, TimeSpan.FromSeconds(10)), "a disposed client connection did not leave its loop");
        }
    }

    [Fact]
    public void AReservationThatNeverAttachesIsGivenBack()
    {
        var loop = new UdpDriverLoop("test loop");
        loop.Reserve();
        int reserved = loop.Count;
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        var driver = new UdpDriver(socket, new System.Net.Quic.Managed.Core.Endpoint(new System.Net.Quic.Managed.Core.EndpointOptions { IsServer = false }), loop: loop);
        driver.Dispose(); // never started: the loop's count drops back, so an idle loop can still end
        Assert.Equal(reserved - 1, loop.Count);
    }
}
