using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionStreamConcurrencyTests(ITestOutputHelper output)
{
    private static byte Pattern(long streamIndex, long offset) => (byte)(offset * 31 + streamIndex * 7 + 1);

    private static int LengthOf(long streamIndex) => 100 + (int)(streamIndex * 37 % 3000);

    /// <summary>
    /// 1,000 bidirectional streams on one connection, each written with FIN and echoed back by the server,
    /// every byte checked both ways. The server allows 100 at once, so the client must wait for MAX_STREAMS, which
    /// the server sends as streams close (RFC 9000 §4.6).
    /// </summary>
    [Fact]
    public void AThousandEchoedStreamsWithStreamCreditRefilledByMaxStreams()
    {
        const int total = 1000;
        var link = new LinkConditions { DelayUs = 5_000, BandwidthBitsPerSecond = 200_000_000, QueueLimitBytes = 1 << 20, LossProbability = 0.01 };
        using var pair = new QuicPair(seed: 400, link);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.Equal(100, client.Streams.LocalBidiLimit.MaxStreams);
        long startUs = pair.Network.NowUs;

        int opened = 0, echoed = 0, blockedOpens = 0, corrupt = 0;
        var serverReceived = new Dictionary<long, List<byte>>();
        var serverDone = new HashSet<long>();
        var clientReceived = new Dictionary<long, int>();
        byte[] buffer = new byte[8192];
        byte[] payload = new byte[4096];
        int streamsAvailableEvents = 0;

        bool Step()
        {
            while (opened < total)
            {
                if (!client.TryOpenStream(unidirectional: false, out long id))
                {
                    blockedOpens++;
                    break;
                }
                long index = id / 4;
                int length = LengthOf(index);
                for (int i = 0; i < length; i++) payload[i] = Pattern(index, i);
                Assert.Equal(length, client.WriteStream(id, payload.AsSpan(0, length), fin: true));
                clientReceived[id] = 0;
                opened++;
            }
            while (server.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind is not (ConnectionEventKind.StreamOpened or ConnectionEventKind.StreamReadable) || serverDone.Contains(e.StreamId)) continue;
                if (!serverReceived.TryGetValue(e.StreamId, out List<byte>? data)) serverReceived[e.StreamId] = data = new List<byte>();
                while (true)
                {
                    int n = server.ReadStream(e.StreamId, buffer, out bool fin, out bool reset, out _);
                    Assert.False(reset);
                    data.AddRange(buffer.AsSpan(0, n).ToArray());
                    if (fin)
                    {
                        // Echo everything back with FIN.
                        Assert.Equal(data.Count, server.WriteStream(e.StreamId, data.ToArray(), fin: true));
                        serverReceived.Remove(e.StreamId);
                        serverDone.Add(e.StreamId);
                        break;
                    }
                    if (n == 0) break;
                }
            }
            while (client.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind == ConnectionEventKind.StreamsAvailable) streamsAvailableEvents++;
                if (e.Kind != ConnectionEventKind.StreamReadable || !clientReceived.TryGetValue(e.StreamId, out int got)) continue;
                long index = e.StreamId / 4;
                while (true)
                {
                    int n = client.ReadStream(e.StreamId, buffer, out bool fin, out bool reset, out _);
                    Assert.False(reset);
                    for (int i = 0; i < n; i++)
                    {
                        if (buffer[i] != Pattern(index, got + i)) corrupt++;
                    }
                    got += n;
                    if (fin)
                    {
                        if (got != LengthOf(index)) corrupt++;
                        clientReceived.Remove(e.StreamId);
                        echoed++;
                        break;
                    }
                    clientReceived[e.StreamId] = got;
                    if (n == 0) break;
                }
            }
            return echoed == total;
        }

        SimRunResult result = pair.RunUntil(Step, 60_000_000);
        long elapsedUs = pair.Network.NowUs - startUs;
        output.WriteLine($"{echoed}/{total} streams echoed in {elapsedUs / 1000} ms virtual ({result}), blocked opens {blockedOpens}, " +
            $"StreamsAvailable {streamsAvailableEvents}, client max streams {client.Streams.LocalBidiLimit.MaxStreams}, lost {client.Statistics.PacketsLost}");
        Assert.Equal(0, corrupt);
        Assert.Equal(total, echoed);
        Assert.True(blockedOpens > 0, "the client never had to wait for stream credit");
        Assert.True(streamsAvailableEvents > 0);
        Assert.True(client.Streams.LocalBidiLimit.MaxStreams >= total);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
        Assert.Equal(ConnectionPhase.Open, server.Phase);

        // Every stream ends closed on both sides and is released (its state freed).
        pair.RunUntil(() => client.Streams.Count == 0 && server.Streams.Count == 0, 5_000_000);
        Assert.Equal(0, server.Streams.Count);
        Assert.Equal(0, client.Streams.Count);
    }

    /// <summary>
    /// The same for 1,000 unidirectional streams: the server's MAX_STREAMS (uni) credit comes back as it finishes
    /// reading each stream (a receive-only stream is closed once all its data was read, RFC 9000 §3.2).
    /// </summary>
    [Fact]
    public void AThousandUnidirectionalStreamsWithCreditRefilled()
    {
        const int total = 1000;
        using var pair = new QuicPair(seed: 402);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        int opened = 0, finished = 0, corrupt = 0, blockedOpens = 0;
        var received = new Dictionary<long, int>();
        byte[] buffer = new byte[4096];
        byte[] payload = new byte[4096];
        pair.RunUntil(() =>
        {
            while (opened < total)
            {
                if (!client.TryOpenStream(unidirectional: true, out long id))
                {
                    blockedOpens++;
                    break;
                }
                long index = id / 4;
                int length = LengthOf(index);
                for (int i = 0; i < length; i++) payload[i] = Pattern(index, i);
                Assert.Equal(length, client.WriteStream(id, payload.AsSpan(0, length), fin: true));
                opened++;
            }
            while (server.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind != ConnectionEventKind.StreamReadable || received.GetValueOrDefault(e.StreamId) < 0) continue;
                long index = e.StreamId / 4;
                int got = received.GetValueOrDefault(e.StreamId);
                while (true)
                {
                    int n = server.ReadStream(e.StreamId, buffer, out bool fin, out _, out _);
                    for (int i = 0; i < n; i++)
                    {
                        if (buffer[i] != Pattern(index, got + i)) corrupt++;
                    }
                    got += n;
                    if (fin)
                    {
                        if (got != LengthOf(index)) corrupt++;
                        got = -1;
                        finished++;
                        break;
                    }
                    if (n == 0) break;
                }
                received[e.StreamId] = got;
            }
            return finished == total;
        }, 30_000_000);
        output.WriteLine($"{finished}/{total} unidirectional streams at {pair.Network.NowUs / 1000} ms, blocked opens {blockedOpens}, max streams {client.Streams.LocalUniLimit.MaxStreams}");
        Assert.Equal(0, corrupt);
        Assert.Equal(total, finished);
        Assert.True(blockedOpens > 0);
        Assert.True(client.Streams.LocalUniLimit.MaxStreams >= total);
        pair.RunUntil(() => client.Streams.Count == 0 && server.Streams.Count == 0, 2_000_000);
        Assert.Equal(0, client.Streams.Count);
        Assert.Equal(0, server.Streams.Count);
    }

    /// <summary>
    /// A reader that consumes 16 KiB every 10 ms holds a fast sender at its flow-control limit. The sender's
    /// buffered and allocated memory stays within its send buffer and the receiver's within its stream window; once
    /// the reader speeds up the transfer completes byte-exact.
    /// </summary>
    [Fact]
    public void SlowReaderBoundsMemoryOnBothSidesAndTheTransferCompletesLater()
    {
        const long total = 8 << 20;
        const long sendBuffer = 256 * 1024, streamWindow = 128 * 1024, maxStreamWindow = 512 * 1024;
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 100_000_000, QueueLimitBytes = 1 << 20 };
        var streams = new StreamTableOptions
        {
            InitialMaxData = 1 << 20, InitialMaxStreamDataBidiLocal = streamWindow, InitialMaxStreamDataBidiRemote = streamWindow,
            InitialMaxStreamDataUni = streamWindow, MaxStreamReceiveWindow = maxStreamWindow, MaxConnectionReceiveWindow = 2 << 20,
            MaxSendBufferPerStream = sendBuffer, MaxStreamsBidi = 10, MaxStreamsUni = 10,
        };
        using var pair = new QuicPair(seed: 401, link, configure: p =>
        {
            p.ClientOptions = new ConnectionOptions { Random = p.ClientOptions.Random, Name = "client", MaxDatagramSize = 1452, Streams = streams };
            p.ServerOptions = new ConnectionOptions { Random = p.ServerOptions.Random, Name = "server", MaxDatagramSize = 1452, Streams = streams };
        });
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        var transfer = new StreamTransfer(pair, client, server, total, readLimitPerStep: 0);

        long maxSenderAllocated = 0, maxSenderBuffered = 0, maxReceiverAllocated = 0, maxReceiverBuffered = 0;
        long slowPhaseEndUs = pair.Network.NowUs + 3_000_000;
        while (pair.Network.NowUs < slowPhaseEndUs)
        {
            pair.Network.RunFor(10_000);
            transfer.ReadLimitPerStep = 16 * 1024;
            transfer.Step();
            transfer.ReadLimitPerStep = 0;
            foreach (TransportStream s in client.Streams.Streams)
            {
                maxSenderAllocated = Math.Max(maxSenderAllocated, s.Send!.Buffer.AllocatedBytes);
                maxSenderBuffered = Math.Max(maxSenderBuffered, s.Send.Buffer.BufferedBytes);
            }
            foreach (TransportStream s in server.Streams.Streams)
            {
                maxReceiverAllocated = Math.Max(maxReceiverAllocated, s.Receive!.Buffer.AllocatedBytes);
                maxReceiverBuffered = Math.Max(maxReceiverBuffered, s.Receive.Buffer.BufferedBytes);
            }
        }
        long slowReceived = transfer.Received;
        // The sender's application never takes its events here: they must not pile up one per acknowledged packet.
        Assert.InRange(client.PendingEventCount, 0, 8);
        output.WriteLine($"slow phase: read {slowReceived} bytes in 3 s; sender buffered max {maxSenderBuffered}, allocated max {maxSenderAllocated}; " +
            $"receiver buffered max {maxReceiverBuffered}, allocated max {maxReceiverAllocated}; client sent {client.Statistics.BytesSent} bytes");
        // The reader took 16 KiB per 10 ms: about 4.8 MiB in 3 s, far below what the link could carry (37 MiB).
        Assert.InRange(slowReceived, 3 << 20, 5 << 20);
        Assert.False(transfer.Done);
        Assert.InRange(maxSenderBuffered, 1, sendBuffer);
        Assert.InRange(maxSenderAllocated, 1, sendBuffer + 64 * 1024);
        Assert.InRange(maxReceiverBuffered, 1, maxStreamWindow);
        Assert.InRange(maxReceiverAllocated, 1, maxStreamWindow + 64 * 1024);
        // The sender was held by flow control, not by the network: it sent hardly more than the reader took plus a window.
        Assert.True(client.Statistics.BytesSent < slowReceived + maxStreamWindow + sendBuffer + (1 << 20),
            $"sent {client.Statistics.BytesSent} for {slowReceived} read");

        transfer.ReadLimitPerStep = int.MaxValue;
        transfer.Run(30_000_000);
        Assert.False(transfer.Corrupted);
        Assert.True(transfer.ReceivedFin, $"only {transfer.Received} of {total} bytes arrived");
    }
}
