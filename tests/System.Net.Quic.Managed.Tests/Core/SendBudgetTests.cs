using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// A connection's send buffering is bounded by its send budget (<see cref="ConnectionBufferBudget"/>), not by a fixed
/// amount per stream: a peer that opens many streams and never reads cannot make the sender hold a stream buffer's worth
/// on each; the budget follows the path for a bulk transfer; the listener-wide account sees every chunk come and go.
/// </summary>
public class SendBudgetTests(ITestOutputHelper output)
{
    [Fact]
    public void BudgetGrowsInStepsAboveTwiceTheCongestionWindowUpToItsMaximum()
    {
        var budget = new ConnectionBufferBudget();
        Assert.Equal(ConnectionBufferBudget.MinimumSendBytes, budget.SendLimitBytes);
        budget.OnCongestionWindow(12_000);
        Assert.Equal(ConnectionBufferBudget.MinimumSendBytes, budget.SendLimitBytes);
        budget.OnCongestionWindow(1 << 20);
        Assert.True(budget.SendLimitBytes > 2 << 20 && budget.SendLimitBytes <= 3 << 20, budget.SendLimitBytes.ToString());
        budget.OnCongestionWindow(64_000); // does not shrink
        Assert.True(budget.SendLimitBytes > 2 << 20);
        budget.OnCongestionWindow(1L << 40);
        Assert.Equal(ConnectionBufferBudget.MaximumSendBytes, budget.SendLimitBytes);
    }

    [Fact]
    public void BudgetFollowsTheCongestionWindowOnlyAsFarAsThePeersCreditLetsItBeUsed()
    {
        var budget = new ConnectionBufferBudget();
        budget.OnCongestionWindow(4 << 20, flowWindow: 100_000); // a slow reader's credit: the window is not usable
        Assert.Equal(ConnectionBufferBudget.MinimumSendBytes, budget.SendLimitBytes);
        budget.OnCongestionWindow(4 << 20, flowWindow: 0);
        Assert.Equal(ConnectionBufferBudget.MinimumSendBytes, budget.SendLimitBytes);
        budget.OnCongestionWindow(4 << 20, flowWindow: 1 << 20); // credit for 1 MiB: the budget follows twice that
        Assert.True(budget.SendLimitBytes > 2 << 20 && budget.SendLimitBytes <= 3 << 20, budget.SendLimitBytes.ToString());
        budget.OnCongestionWindow(512 * 1024, flowWindow: 64 << 20); // the congestion window is the smaller: no growth
        Assert.True(budget.SendLimitBytes <= 3 << 20);
    }

    [Fact]
    public void StreamPathLimitIsTwiceTheBytesInFlightLessTheirQueueAtMostTheBudget()
    {
        var budget = new ConnectionBufferBudget();
        budget.OnPathEstimate(1 << 20, minRttUs: 0, smoothedRttUs: 100); // no round trip measured yet: nothing
        Assert.Equal(0, budget.StreamPathLimitBytes);
        budget.OnCongestionWindow(4 << 20);
        budget.OnPathEstimate(4 << 20, minRttUs: 100_000, smoothedRttUs: 100_000); // no queue: twice what is in flight
        Assert.Equal(8 << 20, budget.StreamPathLimitBytes);
        budget.OnPathEstimate(4 << 20, minRttUs: 50, smoothedRttUs: 500); // nine tenths of the round trip is queueing
        Assert.Equal(2 * (4 << 20) / 10, budget.StreamPathLimitBytes);
        budget.OnPathEstimate(1L << 30, minRttUs: 100_000, smoothedRttUs: 100_000); // at most the budget
        Assert.Equal(budget.SendLimitBytes, budget.StreamPathLimitBytes);
    }

    [Fact]
    public void RoomIsTheBudgetOrTwiceItForBytesThatCanLeaveNow()
    {
        var budget = new ConnectionBufferBudget();
        long limit = budget.SendLimitBytes;
        Assert.Equal(limit, budget.RoomFor(0));
        budget.OnChunksChanged(limit, send: true);
        Assert.Equal(0, budget.RoomFor(0));
        Assert.Equal(4096, budget.RoomFor(4096)); // within flow credit: may go past the budget...
        Assert.Equal(limit, budget.RoomFor(long.MaxValue / 4)); // ...up to twice it
        budget.OnChunksChanged(limit, send: true);
        Assert.Equal(0, budget.RoomFor(long.MaxValue / 4));
    }

    [Fact]
    public void BytesBeyondTheStreamsCreditTakeOnlyTheMinimumBudgetHoweverFarTheBudgetGrew()
    {
        var budget = new ConnectionBufferBudget();
        budget.OnCongestionWindow(4 << 20);
        long limit = budget.SendLimitBytes, minimum = ConnectionBufferBudget.MinimumSendBytes;
        Assert.True(limit > 8 << 20);
        Assert.Equal(minimum, budget.RoomFor(0)); // no credit: the minimum budget
        Assert.Equal(2 * limit, budget.RoomFor(long.MaxValue / 4, long.MaxValue / 4)); // everything can leave: twice the grown budget
        Assert.Equal(limit, budget.RoomFor(0, streamCredit: long.MaxValue / 4)); // within the stream's credit, waiting for the connection's: the budget
        budget.OnChunksChanged(minimum, send: true);
        Assert.Equal(0, budget.RoomFor(0));
        Assert.Equal(limit - minimum, budget.WakeRoom(long.MaxValue / 4)); // waiters on the budget see the grown budget...
        Assert.Equal(64 * 1024, budget.WakeRoom(64 * 1024)); // ...as far as the connection's credit lets the path hold
        Assert.Equal(4096, budget.RoomFor(4096, 4096));
        // Bytes within the credit are bounded by what the connection's credit lets the path hold, too.
        Assert.Equal(0, budget.RoomFor(long.MaxValue / 4, long.MaxValue / 4, flowWindow: 0));
        Assert.Equal(64 * 1024, budget.RoomFor(long.MaxValue / 4, 0, flowWindow: 64 * 1024));
        Assert.Equal(64 * 1024, budget.RoomFor(0, long.MaxValue / 4, flowWindow: 64 * 1024));
        // A write held back within its stream's credit waits on the budget (acknowledgments, MAX_DATA); one held back
        // only beyond that credit waits for MAX_STREAM_DATA.
        Assert.True(budget.WaitsOnBudget(streamCredit: 4096, room: 0));
        Assert.False(budget.WaitsOnBudget(streamCredit: 4096, room: 4096));
        // At the minimum budget every held-back write waits on the budget.
        Assert.True(new ConnectionBufferBudget().WaitsOnBudget(streamCredit: 0, room: 0));
    }

    [Fact]
    public void ExceededListenerBudgetFallsBackToTheMinimumAndDetachGivesBackTheChunks()
    {
        var endpoint = new EndpointBufferBudget(64 * 1024);
        var budget = new ConnectionBufferBudget(endpoint);
        budget.OnCongestionWindow(4 << 20);
        Assert.True(budget.SendLimitBytes > ConnectionBufferBudget.MinimumSendBytes);
        budget.OnChunksChanged(64 * 1024);
        Assert.True(endpoint.IsExceeded);
        Assert.Equal(ConnectionBufferBudget.MinimumSendBytes, budget.RoomFor(0));
        budget.OnChunksChanged(-4096);
        Assert.Equal(60 * 1024, endpoint.ChargedBytes);
        budget.Detach();
        Assert.Equal(0, endpoint.ChargedBytes);
        budget.OnChunksChanged(-4096); // a chunk returned after the connection went does not count twice
        Assert.Equal(0, endpoint.ChargedBytes);
    }

    [Fact]
    public void WaitersAreWokenWhileThereIsRoomOncePerStream()
    {
        var budget = new ConnectionBufferBudget();
        budget.AddWaiter(4);
        budget.AddWaiter(8);
        budget.AddWaiter(4);
        budget.AddWaiter(12);
        long room = 20_000;
        Assert.True(budget.TryTakeWaiter(ref room, 16_384, out long first));
        Assert.True(budget.TryTakeWaiter(ref room, 16_384, out long second));
        Assert.False(budget.TryTakeWaiter(ref room, 16_384, out _));
        Assert.Equal((4, 8), (first, second));
        room = 1;
        Assert.True(budget.TryTakeWaiter(ref room, 16_384, out long third));
        Assert.Equal(12, third);
        Assert.False(budget.HasWaiters);
    }

    /// <summary>
    /// The slow-reader attack (RFC 9000 §21.6): the client advertises 2,048 bytes per stream and 256 KiB for the
    /// connection, opens 1,000 streams and never reads; the server's application writes 1 MiB on each. The server
    /// accepts no more than its send budget (twice at most) plus what the client's credit let through, instead of a
    /// stream buffer on each stream, and holds no more memory than that.
    /// </summary>
    [Fact]
    public void SlowReaderWithAThousandStreamsCannotCommitTheSendersMemory()
    {
        const int streamCount = 1000;
        using QuicPair pair = SlowReaderPair(streamCount);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Queue<long> requests = OpenRequestStreams(client, streamCount);
        byte[] chunk = new byte[64 * 1024];
        var written = new Dictionary<long, long>();
        long accepted = 0;
        long maxHeld = RunSlowReader(pair, requests, 300, id =>
        {
            written.TryGetValue(id, out long done);
            while (done < (1 << 20))
            {
                int n = server.WriteStream(id, chunk.AsSpan(0, (int)Math.Min(chunk.Length, (1 << 20) - done)), fin: false);
                if (n == 0) break;
                done += n;
                accepted += n;
            }
            written[id] = done;
        });

        ConnectionBufferBudget budget = server.BufferBudget;
        output.WriteLine($"streams {written.Count}, accepted {accepted}, held max {maxHeld}, budget {budget.SendLimitBytes}, chunks {budget.ChunkBytes}, sent {server.Statistics.BytesSent}");
        Assert.Equal(streamCount, written.Count);
        Assert.InRange(maxHeld, 1, 2 * budget.SendLimitBytes + (64 * 1024));
        Assert.InRange(accepted, 1, (256 * 1024) + (2 * budget.SendLimitBytes) + (64 * 1024));
        Assert.True(budget.SendLimitBytes <= 2 << 20, $"budget {budget.SendLimitBytes}");
        Assert.InRange(budget.ChunkBytes, 1, 2 * budget.SendLimitBytes + (64 * 1024));
        // The client's credit was used: 256 KiB (the connection's) left the server.
        Assert.True(server.Statistics.BytesSent > 256 * 1024, $"sent {server.Statistics.BytesSent}");
    }

    /// <summary>
    /// A peer that gives real credit first, then never reads: the server sends fast while the credit lasts, so its
    /// budget grows well past the minimum, but the bytes its 200 streams' writes leave behind the credit (which never
    /// leave) stay within the minimum budget, not the grown one. Either the streams' credit runs out first (64 KiB per
    /// stream, as a System.Net.Quic client gives back for the bytes its receive buffer takes before the application
    /// reads, with a large connection window), or the connection's (1 MiB per stream, 8 MiB for the connection).
    /// </summary>
    [Theory]
    [InlineData(64 * 1024, 64 << 20)]
    [InlineData(1 << 20, 8 << 20)]
    public void ReaderThatGaveCreditThenStoppedLeavesNoMoreThanTheMinimumBudgetHeld(int streamWindow, int connectionWindow)
    {
        const int streamCount = 200;
        using QuicPair pair = SlowReaderPair(streamCount, streamWindow, connectionWindow, bandwidthBitsPerSecond: 1_000_000_000);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Queue<long> requests = OpenRequestStreams(client, streamCount);
        byte[] chunk = new byte[64 * 1024];
        long maxHeld = RunSlowReader(pair, requests, 300, id =>
        {
            while (server.WriteStream(id, chunk, fin: false) > 0)
            {
            }
        });

        ConnectionBufferBudget budget = server.BufferBudget;
        output.WriteLine($"sent {server.Statistics.BytesSent}, budget {budget.SendLimitBytes}, held {budget.SendHeldBytes} (max {maxHeld}), cwnd {server.CongestionController.CongestionWindow}");
        // All the credit was used, and fast enough for the budget to grow...
        Assert.True(server.Statistics.BytesSent > Math.Min((long)streamCount * streamWindow, connectionWindow), $"sent {server.Statistics.BytesSent}");
        Assert.True(budget.SendLimitBytes >= 4 * ConnectionBufferBudget.MinimumSendBytes, $"budget {budget.SendLimitBytes}");
        // ...but what stays behind the peer's credit is bounded by the minimum budget (and, for a stream that sent part
        // of a chunk, the chunk: the bytes are counted as the memory they take).
        Assert.InRange(budget.SendHeldBytes, 1, ConnectionBufferBudget.MinimumSendBytes + (streamCount * StreamChunkBuffer.DefaultChunkSize));
    }

    /// <summary>A bulk transfer on one stream grows the budget past the per-stream buffer and completes.</summary>
    [Fact]
    public void BulkTransferGrowsTheBudgetAndCompletes()
    {
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 200_000_000, QueueLimitBytes = 1 << 20 };
        using var pair = new QuicPair(seed: 31, link);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        var transfer = new StreamTransfer(pair, client, server, 16 << 20, readLimitPerStep: int.MaxValue);
        transfer.Run(30_000_000);
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin);
        pair.RunUntil(() => client.BufferBudget.SendHeldBytes == 0, 1_000_000); // the last acknowledgments
        output.WriteLine($"budget {client.BufferBudget.SendLimitBytes}, cwnd {client.CongestionController.CongestionWindow}");
        Assert.True(client.BufferBudget.SendLimitBytes > 2 * client.CongestionController.CongestionWindow || client.BufferBudget.SendLimitBytes == ConnectionBufferBudget.MaximumSendBytes);
        Assert.True(client.BufferBudget.SendLimitBytes > ConnectionBufferBudget.MinimumSendBytes);
        Assert.Equal(0, client.BufferBudget.SendHeldBytes);
    }

    /// <summary>
    /// One stream on a long fat path (1 Gbit/s, 100 ms round trip: 12.5 MB in flight to fill it) is not held to a fixed
    /// per-stream buffer: the stream's bound follows the connection's budget, so the transfer reaches several times the
    /// 1 MiB per round trip (84 Mbit/s) a fixed 1 MiB per stream would allow.
    /// </summary>
    [Fact]
    public void OneStreamOnALongFatPathIsNotHeldToTheFixedPerStreamBuffer()
    {
        var link = new LinkConditions { DelayUs = 50_000, BandwidthBitsPerSecond = 1_000_000_000, QueueLimitBytes = 16 << 20 };
        var streams = new StreamTableOptions
        {
            InitialMaxData = 1 << 20, MaxConnectionReceiveWindow = 64 << 20,
            InitialMaxStreamDataBidiLocal = 256 * 1024, InitialMaxStreamDataBidiRemote = 256 * 1024, InitialMaxStreamDataUni = 256 * 1024,
            MaxStreamReceiveWindow = 64 << 20,
        };
        using var pair = new QuicPair(seed: 32, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", Streams = streams };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", Streams = streams };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        const long total = 96L << 20;
        var transfer = new StreamTransfer(pair, client, server, total, readLimitPerStep: int.MaxValue);
        transfer.Run(60_000_000);
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin);
        double mbit = total * 8.0 / (transfer.EndUs - transfer.StartUs);
        output.WriteLine($"{mbit:F0} Mbit/s over {(transfer.EndUs - transfer.StartUs) / 1000} ms; cwnd {client.CongestionController.CongestionWindow}, budget {client.BufferBudget.SendLimitBytes}");
        Assert.True(mbit > 4 * 84, $"{mbit:F0} Mbit/s");
    }

    /// <summary>
    /// A simulated pair set up for the slow-reader attack, handshake done: the client advertises
    /// <paramref name="streamWindow"/> bytes per stream (2,048) and <paramref name="connectionWindow"/> for the
    /// connection (256 KiB), windows that do not grow, and lets the server open no streams; the server takes
    /// <paramref name="streamCount"/> bidirectional streams from it. 5 ms each way, 100 Mbit/s unless told.
    /// </summary>
    internal static QuicPair SlowReaderPair(int streamCount, int streamWindow = 2048, int connectionWindow = 256 * 1024, long bandwidthBitsPerSecond = 100_000_000)
    {
        var link = new LinkConditions { DelayUs = 5_000, BandwidthBitsPerSecond = bandwidthBitsPerSecond };
        var clientStreams = new StreamTableOptions
        {
            InitialMaxData = connectionWindow, MaxConnectionReceiveWindow = connectionWindow,
            InitialMaxStreamDataBidiLocal = streamWindow, InitialMaxStreamDataBidiRemote = streamWindow, InitialMaxStreamDataUni = streamWindow,
            MaxStreamReceiveWindow = streamWindow, MaxStreamsBidi = 0, MaxStreamsUni = 0,
        };
        var serverStreams = new StreamTableOptions { MaxStreamsBidi = streamCount, MaxStreamsUni = 0 };
        var pair = new QuicPair(seed: 30, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", Streams = clientStreams };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", Streams = serverStreams };
        });
        Assert.True(pair.Handshake());
        return pair;
    }

    /// <summary>Opens <paramref name="count"/> bidirectional streams on the client, the requests still to send.</summary>
    private static Queue<long> OpenRequestStreams(Connection client, int count)
    {
        var requests = new Queue<long>();
        for (int i = 0; i < count; i++)
        {
            Assert.True(client.TryOpenStream(unidirectional: false, out long id));
            requests.Enqueue(id);
        }
        return requests;
    }

    /// <summary>The client's own send budget takes the requests in turn (each holds a chunk until acknowledged).</summary>
    private static void SendRequests(Connection client, Queue<long> requests)
    {
        while (requests.TryPeek(out long request) && client.WriteStream(request, "GET /1M"u8, fin: true) > 0) requests.Dequeue();
    }

    /// <summary>
    /// Runs the attack in steps of 10 ms: the client sends its requests as its budget takes them, the server reads
    /// each stream's request and <paramref name="respond"/> writes on it. Returns the most the server's send buffers held.
    /// </summary>
    private static long RunSlowReader(QuicPair pair, Queue<long> requests, int steps, Action<long> respond)
    {
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        byte[] request = new byte[64];
        long maxHeld = 0;
        for (int step = 0; step < steps; step++)
        {
            SendRequests(client, requests);
            pair.Network.RunFor(10_000);
            foreach (TransportStream stream in server.Streams.Streams)
            {
                if (stream.Send is null) continue;
                server.ReadStream(stream.Id, request, out _, out _, out _);
                respond(stream.Id);
            }
            maxHeld = Math.Max(maxHeld, server.BufferBudget.SendHeldBytes);
        }
        return maxHeld;
    }
}
