using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// The endpoint touches only connections with something to do: beside idle connections, a busy one's transfer makes no
/// call into them (counted per connection by the endpoint), and the timer heap stays bounded however often the busy
/// connection's deadline moves.
/// </summary>
public class EndpointSchedulingTests(ITestOutputHelper output)
{
    private const int IdleConnections = 40;

    [Fact]
    public void ABusyConnectionsTransferMakesNoCallIntoIdleConnections()
    {
        using var pair = new QuicPair(seed: 31);
        var idle = new List<(Connection Client, Connection Server)>();
        for (int i = 0; i <= IdleConnections; i++)
        {
            Connection client = i == 0 ? pair.Connect() : pair.ConnectAgain();
            Assert.True(pair.RunUntil(() => pair.ServerConnection is not null && client.IsHandshakeConfirmed && pair.ServerConnection.IsHandshakeConfirmed, 5_000_000) == SimRunResult.ConditionMet);
            idle.Add((client, pair.ServerConnection!));
        }
        (Connection busyClient, Connection busyServer) = idle[^1];
        idle.RemoveAt(idle.Count - 1);
        Assert.Equal(IdleConnections + 1, pair.ServerEndpoint.Connections.Count);
        Assert.Equal(IdleConnections + 1, pair.ClientEndpoint.Connections.Count);

        // Let every handshake's last ACKs and timers settle: from here on the idle ones have only their idle timer (30 s).
        pair.Network.RunFor(2_000_000);
        long[] clientCalls = idle.Select(c => c.Client.Slot.Calls).ToArray();
        long[] serverCalls = idle.Select(c => c.Server.Slot.Calls).ToArray();
        long busyCallsBefore = busyServer.Slot.Calls;

        var transfer = new StreamTransfer(pair, busyClient, busyServer, 4 << 20);
        transfer.Run(20_000_000);
        Assert.True(transfer.ReceivedFin);
        Assert.False(transfer.Corrupted);

        long busyCalls = busyServer.Slot.Calls - busyCallsBefore;
        output.WriteLine($"busy server connection: {busyCalls} calls; heap entries {pair.ServerEndpoint.Scheduler.TimerEntries} / {pair.ClientEndpoint.Scheduler.TimerEntries}");
        Assert.True(busyCalls > 1000, $"the busy connection was called {busyCalls} times");
        for (int i = 0; i < idle.Count; i++)
        {
            Assert.Equal(clientCalls[i], idle[i].Client.Slot.Calls);
            Assert.Equal(serverCalls[i], idle[i].Server.Slot.Calls);
        }
        // Stale heap entries never outnumber the live ones by much (lazy invalidation with rebuilds).
        Assert.InRange(pair.ServerEndpoint.Scheduler.TimerEntries, 1, 2 * (IdleConnections + 1) + 64);
        Assert.InRange(pair.ClientEndpoint.Scheduler.TimerEntries, 1, 2 * (IdleConnections + 1) + 64);
    }

    [Fact]
    public void IdleConnectionsTimeOutFromTheHeapAndLeaveNothingBehind()
    {
        using var pair = new QuicPair(seed: 32, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", IdleTimeoutUs = 1_000_000, Streams = QuicPair.DefaultStreams };
        });
        for (int i = 0; i < 10; i++)
        {
            Connection client = i == 0 ? pair.Connect() : pair.ConnectAgain();
            Assert.True(pair.RunUntil(() => client.IsHandshakeConfirmed, 5_000_000) == SimRunResult.ConditionMet);
        }
        Assert.Equal(10, pair.ServerEndpoint.Connections.Count);
        Assert.Equal(0, pair.ServerEndpoint.HandshakesInProgress);
        pair.Network.RunFor(10_000_000);
        Assert.Empty(pair.ClientEndpoint.Connections);
        Assert.Empty(pair.ServerEndpoint.Connections);
        Assert.Equal(0, pair.ServerEndpoint.RouteCount);
        Assert.Equal(long.MaxValue, pair.ServerEndpoint.NextTimeoutUs);
        Assert.Equal(0, pair.ServerEndpoint.Scheduler.ReadyCount);
    }
}
