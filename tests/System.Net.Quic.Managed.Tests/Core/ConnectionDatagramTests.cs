using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// DATAGRAM (RFC 9221) in the core on the simulated network: negotiation through max_datagram_frame_size, delivery,
/// no retransmission under loss (streams still complete), fair sharing with a bulk stream, bounded queues, and the
/// PROTOCOL_VIOLATION cases of §3.
/// </summary>
public class ConnectionDatagramTests
{
    private static ConnectionOptions Options(int seed, string name, ulong maxDatagramFrameSize, int receiveCapacity = 128) => new()
    {
        Random = new SeededRandomSource(seed),
        Name = name,
        MaxDatagramSize = 1452,
        Streams = QuicPair.DefaultStreams,
        MaxDatagramFrameSize = maxDatagramFrameSize,
        DatagramReceiveQueueCapacity = receiveCapacity,
    };

    private static QuicPair Pair(int seed, ulong clientMax, ulong serverMax, LinkConditions? link = null, int receiveCapacity = 128)
        => new(seed, link, configure: p =>
        {
            p.ClientOptions = Options(seed * 2 + 1, "client", clientMax, receiveCapacity);
            p.ServerOptions = Options(seed * 2 + 2, "server", serverMax, receiveCapacity);
        });

    private static byte[] Payload(int index, int length)
    {
        byte[] data = new byte[length];
        BitConverter.TryWriteBytes(data, index);
        for (int i = 4; i < length; i++) data[i] = (byte)(index + i);
        return data;
    }

    private static List<byte[]> DrainReceived(Connection c)
    {
        var list = new List<byte[]>();
        while (c.TryDequeueReceivedDatagram(out byte[] d)) list.Add(d);
        return list;
    }

    private static List<DatagramOutcome> DrainOutcomes(Connection c)
    {
        var list = new List<DatagramOutcome>();
        while (c.TryDequeueDatagramOutcome(out DatagramOutcome o)) list.Add(o);
        return list;
    }

    [Fact]
    public void MaxDatagramPayloadSizeFollowsThePeersParameter()
    {
        using QuicPair pair = Pair(1, clientMax: 0, serverMax: 200);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        // The server advertised 200: the client's frames (type + 2-byte length + payload) must stay within it.
        Assert.Equal(200 - 1 - 2, client.MaxDatagramPayloadSize);
        Assert.Equal(200UL, client.PeerParameters!.MaxDatagramFrameSize);
        // The client advertised nothing: the server may not send DATAGRAM at all.
        Assert.Null(server.PeerParameters!.MaxDatagramFrameSize);
        Assert.Equal(0, server.MaxDatagramPayloadSize);
        Assert.Equal(DatagramQueueResult.NotNegotiated, server.QueueDatagram(new byte[1], out _));
        Assert.Equal(DatagramQueueResult.TooLarge, client.QueueDatagram(new byte[198], out _));
        Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(new byte[197], out _));
    }

    [Fact]
    public void LargePeerLimitIsBoundedByThePacketSize()
    {
        using QuicPair pair = Pair(2, clientMax: 65535, serverMax: 65535);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        int max = client.MaxDatagramPayloadSize;
        // 1452-byte datagrams minus the worst-case short header (1 + 20 + 4), the tag (16) and the frame header (1 + 2).
        Assert.Equal(1452 - 25 - 16 - 3, max);
        Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(Payload(0, max), out long id));
        pair.RunUntil(() => pair.ServerConnection!.TryDequeueReceivedDatagram(out _), 1_000_000);
        pair.RunUntil(() => DrainOutcomes(client).Exists(o => o.Id == id), 1_000_000);
        Assert.Equal(1, client.Statistics.DatagramFramesAcknowledged);
    }

    [Fact]
    public void DatagramsRoundTripBothWays()
    {
        using QuicPair pair = Pair(3, clientMax: 1500, serverMax: 1500);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        for (int i = 0; i < 10; i++) Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(Payload(i, 100 + i), out _));
        var atServer = new List<byte[]>();
        pair.RunUntil(() => { atServer.AddRange(DrainReceived(server)); return atServer.Count == 10; }, 2_000_000);
        Assert.Equal(10, atServer.Count);
        for (int i = 0; i < 10; i++) Assert.Equal(Payload(i, 100 + i), atServer[i]);

        // The server answers each: a DATAGRAM received in a 1-RTT packet is ordinary application data.
        foreach (byte[] d in atServer) Assert.Equal(DatagramQueueResult.Queued, server.QueueDatagram(d, out _));
        var atClient = new List<byte[]>();
        pair.RunUntil(() => { atClient.AddRange(DrainReceived(client)); return atClient.Count == 10; }, 2_000_000);
        Assert.Equal(atServer, atClient);

        var outcomes = new List<DatagramOutcome>();
        pair.RunUntil(() => { outcomes.AddRange(DrainOutcomes(client)); return outcomes.Count == 10; }, 2_000_000);
        Assert.All(outcomes, o => Assert.Equal(DatagramSendOutcome.Acknowledged, o.Outcome));
        Assert.Equal(Enumerable.Range(0, 10).Select(i => (long)i), outcomes.Select(o => o.Id).Order());
        Assert.Equal(10, server.Statistics.DatagramFramesReceived);
        Assert.Equal(10, client.Statistics.DatagramFramesSent);
    }

    [Theory]
    [InlineData(10)]
    [InlineData(11)]
    [InlineData(12)]
    public void LostDatagramsAreNotRetransmittedAndStreamsStillComplete(int seed)
    {
        var link = new LinkConditions { DelayUs = 15_000, LossProbability = 0.10 };
        using QuicPair pair = Pair(seed, clientMax: 1500, serverMax: 1500, link);
        Assert.True(pair.Handshake(60_000_000));
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        var transfer = new StreamTransfer(pair, client, server, 300_000);
        const int Count = 300;
        int queued = 0;
        long nextDatagramUs = pair.Network.NowUs;
        var received = new List<int>();
        var outcomes = new Dictionary<long, DatagramSendOutcome>();
        pair.RunUntil(() =>
        {
            // One datagram every 2 ms while the stream transfer runs.
            while (queued < Count && pair.Network.NowUs >= nextDatagramUs)
            {
                Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(Payload(queued, 200), out _));
                queued++;
                nextDatagramUs += 2_000;
            }
            foreach (byte[] d in DrainReceived(server)) received.Add(BitConverter.ToInt32(d));
            foreach (DatagramOutcome o in DrainOutcomes(client)) Assert.True(outcomes.TryAdd(o.Id, o.Outcome), $"second outcome for {o.Id}");
            transfer.Step();
            pair.Network.PollAll();
            return transfer.Done && queued == Count && outcomes.Count == Count;
        }, 60_000_000);

        Assert.True(transfer.ReceivedFin, $"stream transfer incomplete: {transfer.Received} bytes, corrupted {transfer.Corrupted}");
        Assert.False(transfer.Corrupted);
        Assert.Equal(Count, outcomes.Count);
        // Each datagram arrived at most once (nothing repeated), and some were lost and stayed lost.
        Assert.Equal(received.Count, received.Distinct().Count());
        int lost = outcomes.Values.Count(o => o == DatagramSendOutcome.Lost);
        int acked = outcomes.Values.Count(o => o == DatagramSendOutcome.Acknowledged);
        Assert.True(lost > 0, "no datagram was lost at 10 % loss");
        Assert.Equal(Count, lost + acked);
        Assert.True(received.Count < Count, "every datagram arrived although packets were lost: were they retransmitted?");
        Assert.True(received.Count >= acked, $"{acked} acknowledged but {received.Count} received");
        Assert.Equal(Count, client.Statistics.DatagramFramesSent);
        Assert.Equal(lost, client.Statistics.DatagramFramesLost);
        Assert.True(client.Statistics.StreamBytesRetransmitted > 0, "the stream saw no loss: the test does not show what it claims");
    }

    [Fact]
    public void DatagramsAndABulkStreamShareTheCongestionWindow()
    {
        // A bottleneck keeps the window full of stream data; datagrams still get through promptly, and a datagram
        // flood does not stop the stream.
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 20_000_000, QueueLimitBytes = 64 * 1024 };
        using QuicPair pair = Pair(20, clientMax: 1500, serverMax: 1500, link);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        var transfer = new StreamTransfer(pair, client, server, 2_000_000);
        var queuedAt = new Dictionary<int, long>();
        var latencyUs = new List<long>();
        int next = 0;
        pair.RunUntil(() =>
        {
            // Keep the datagram queue topped up (a flood), timestamped to measure each one's delay.
            while (client.QueuedDatagramCount < 8)
            {
                Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(Payload(next, 1000), out _));
                queuedAt[next++] = pair.Network.NowUs;
            }
            foreach (byte[] d in DrainReceived(server)) latencyUs.Add(pair.Network.NowUs - queuedAt[BitConverter.ToInt32(d)]);
            DrainOutcomes(client);
            transfer.Step();
            pair.Network.PollAll();
            return transfer.Done;
        }, 30_000_000);

        Assert.True(transfer.ReceivedFin && !transfer.Corrupted, $"stream starved by datagrams: {transfer.Received} bytes");
        long streamBytes = transfer.Received;
        long datagramBytes = latencyUs.Count * 1000L;
        // Alternating priority: each gets a substantial share of the path (neither below a quarter of the other).
        Assert.True(datagramBytes * 4 > streamBytes && streamBytes * 4 > datagramBytes,
            $"unfair split: {streamBytes} stream bytes, {datagramBytes} datagram bytes");
        Assert.Equal(0, client.Statistics.DatagramFramesSendDropped);
    }

    [Fact]
    public void SendQueueIsBoundedAndDropsTheOldest()
    {
        using QuicPair pair = Pair(4, clientMax: 1500, serverMax: 1500);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        int extra = 10;
        for (int i = 0; i < Connection.MaxQueuedOutgoingDatagrams + extra; i++)
        {
            Assert.Equal(DatagramQueueResult.Queued, client.QueueDatagram(Payload(i, 50), out long id));
            Assert.Equal(i, id);
        }
        Assert.Equal(Connection.MaxQueuedOutgoingDatagrams, client.QueuedDatagramCount);
        List<DatagramOutcome> dropped = DrainOutcomes(client);
        Assert.Equal(Enumerable.Range(0, extra).Select(i => new DatagramOutcome(i, DatagramSendOutcome.Dropped)), dropped);
        Assert.Equal(extra, client.Statistics.DatagramFramesSendDropped);
    }

    [Fact]
    public void ReceiveQueueIsBoundedAndDropsTheOldest()
    {
        using QuicPair pair = Pair(5, clientMax: 1500, serverMax: 1500, receiveCapacity: 4);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        for (int i = 0; i < 20; i++) client.QueueDatagram(Payload(i, 30), out _);
        pair.RunUntil(() => server.Statistics.DatagramFramesReceived == 20, 2_000_000);
        List<byte[]> kept = DrainReceived(server);
        Assert.Equal(new[] { 16, 17, 18, 19 }, kept.Select(d => BitConverter.ToInt32(d)));
        Assert.Equal(16, server.Statistics.DatagramFramesReceiveDropped);
    }

    [Theory]
    [InlineData(0UL, 10, "without")] // §3: we did not advertise max_datagram_frame_size
    [InlineData(100UL, 97, "")] // 1 + 2 + 97 = 100: exactly the limit, accepted
    [InlineData(100UL, 98, "larger")] // §3: 101 bytes, one more than we advertised
    public void DatagramBeyondOurLimitIsAProtocolViolation(ulong serverMax, int payload, string reasonWord)
    {
        using QuicPair pair = Pair(6, clientMax: 0, serverMax: serverMax);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        // Frame type 0x31, one- or two-byte length, payload: encoded length 1 + len(varint) + payload.
        var f = new RawFrameBuilder().VarInt(0x31).VarInt((ulong)payload).Bytes(new byte[payload]);
        int encoded = DatagramFrame.GetEncodedLength(payload, hasLength: true);
        client.SendRawFramesForTesting(f.ToArray());
        pair.RunUntil(() => server.Phase != ConnectionPhase.Open || server.Statistics.DatagramFramesReceived > 0, 2_000_000);
        if ((ulong)encoded <= serverMax)
        {
            Assert.Equal(ConnectionPhase.Open, server.Phase);
            Assert.Equal(1, server.Statistics.DatagramFramesReceived);
            return;
        }
        Assert.NotNull(server.Error);
        Assert.Equal((ulong)TransportErrorCode.ProtocolViolation, server.Error!.Code);
        Assert.Contains(reasonWord, server.Error.Reason);
    }

    [Fact]
    public void MalformedDatagramWithoutOurLimitIsStillAProtocolViolation()
    {
        // RFC 9221 §3: the frame is refused for its type before its body is decoded, so a length past the end of the
        // packet (a FRAME_ENCODING_ERROR otherwise) changes nothing.
        using QuicPair pair = Pair(6, clientMax: 0, serverMax: 0);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        client.SendRawFramesForTesting(new RawFrameBuilder().VarInt(0x31).VarInt(16_000).Bytes(new byte[3]).ToArray());
        pair.RunUntil(() => server.Phase != ConnectionPhase.Open, 2_000_000);
        Assert.NotNull(server.Error);
        Assert.Equal((ulong)TransportErrorCode.ProtocolViolation, server.Error!.Code);
        Assert.Contains("without", server.Error.Reason);
    }

    [Fact]
    public void HostileDatagramFramesNeverCrashAndStayBounded()
    {
        // Mutated DATAGRAM frames (both types, lengths past the end, huge lengths) fed to a connection that accepts them:
        // each ends as a typed error or a datagram no larger than the input; the queue never grows past its capacity.
        var mutator = new System.Net.Quic.Managed.Tests.Wire.InputMutator(15);
        byte[][] seeds =
        [
            Convert.FromHexString("310568656c6c6f"),
            Convert.FromHexString("3068656c6c6f"),
            Convert.FromHexString("31406400"),
            Convert.FromHexString("31c000000000000001ff"),
        ];
        for (int i = 0; i < 3000; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % seeds.Length]);
            var reader = new QuicReader(input);
            if (FrameTypes.TryRead(ref reader, out FrameType type) != TransportErrorCode.NoError) continue;
            if (type is not (FrameType.Datagram or FrameType.DatagramWithLength)) continue;
            TransportErrorCode error = DatagramFrame.TryRead(ref reader, type, out DatagramFrame frame);
            Assert.True(error is TransportErrorCode.NoError or TransportErrorCode.FrameEncodingError, error.ToString());
            if (error == TransportErrorCode.NoError) Assert.True(frame.Data.Length <= input.Length && frame.EncodedLength <= input.Length);
        }

        using QuicPair pair = Pair(7, clientMax: 0, serverMax: 1500, receiveCapacity: 8);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        for (int i = 0; i < 200 && server.Phase == ConnectionPhase.Open; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % 2]);
            if (input.Length == 0 || input[0] is not (0x30 or 0x31)) continue;
            client.SendRawFramesForTesting(input);
            pair.RunUntil(() => false, 20_000);
            Assert.True(server.Statistics.DatagramFramesReceived - server.Statistics.DatagramFramesReceiveDropped <= 8);
        }
        Assert.True(server.Statistics.DatagramFramesReceived > 0 || server.Phase != ConnectionPhase.Open);
        if (server.Phase != ConnectionPhase.Open)
        {
            Assert.True(server.Error!.Code is (ulong)TransportErrorCode.FrameEncodingError or (ulong)TransportErrorCode.ProtocolViolation, server.Error.ToString());
        }
    }
}
