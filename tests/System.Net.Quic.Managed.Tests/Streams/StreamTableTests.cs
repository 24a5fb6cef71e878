using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

public class StreamTableTests
{
    private static StreamTable NewTable(bool isServer, long maxStreams = 4, long window = 1000)
    {
        var table = new StreamTable(isServer, new StreamTableOptions
        {
            InitialMaxData = 100_000,
            MaxConnectionReceiveWindow = 100_000,
            InitialMaxStreamDataBidiLocal = window,
            InitialMaxStreamDataBidiRemote = window,
            InitialMaxStreamDataUni = window,
            MaxStreamReceiveWindow = window,
            MaxStreamsBidi = maxStreams,
            MaxStreamsUni = maxStreams,
            MaxSendBufferPerStream = 10_000,
            ChunkSize = 256,
        });
        Assert.Equal(TransportErrorCode.NoError,
            table.ApplyPeerTransportParameters(100_000, 1000, 1000, 1000, maxStreams, maxStreams, out _));
        return table;
    }

    private static TransportErrorCode Send(StreamTable t, long id, StreamFrameKind kind)
    {
        string? reason;
        return kind switch
        {
            StreamFrameKind.Stream => t.OnStreamFrame(id, 0, new byte[1], false, out reason),
            StreamFrameKind.ResetStream => t.OnResetStreamFrame(id, 1, 0, out reason),
            StreamFrameKind.StopSending => t.OnStopSendingFrame(id, 1, out reason),
            StreamFrameKind.MaxStreamData => t.OnMaxStreamDataFrame(id, 5000, out reason),
            _ => t.OnStreamDataBlockedFrame(id, 0, out reason),
        };
    }

    // RFC 9000 §19.4, §19.5, §19.8, §19.10, §19.13 and §3: which frames a stream's type forbids. Seen from a client:
    // 0 = own bidi, 1 = peer bidi, 2 = own uni (send-only), 3 = peer uni (receive-only).
    [Theory]
    [InlineData(2L, (int)StreamFrameKind.Stream, (ulong)TransportErrorCode.StreamStateError)]
    [InlineData(2L, (int)StreamFrameKind.ResetStream, (ulong)TransportErrorCode.StreamStateError)]
    [InlineData(2L, (int)StreamFrameKind.StreamDataBlocked, (ulong)TransportErrorCode.StreamStateError)]
    [InlineData(2L, (int)StreamFrameKind.StopSending, (ulong)TransportErrorCode.NoError)]
    [InlineData(2L, (int)StreamFrameKind.MaxStreamData, (ulong)TransportErrorCode.NoError)]
    [InlineData(3L, (int)StreamFrameKind.MaxStreamData, (ulong)TransportErrorCode.StreamStateError)]
    [InlineData(3L, (int)StreamFrameKind.StopSending, (ulong)TransportErrorCode.StreamStateError)]
    [InlineData(3L, (int)StreamFrameKind.Stream, (ulong)TransportErrorCode.NoError)]
    [InlineData(3L, (int)StreamFrameKind.ResetStream, (ulong)TransportErrorCode.NoError)]
    [InlineData(3L, (int)StreamFrameKind.StreamDataBlocked, (ulong)TransportErrorCode.NoError)]
    [InlineData(0L, (int)StreamFrameKind.Stream, (ulong)TransportErrorCode.NoError)]
    [InlineData(0L, (int)StreamFrameKind.ResetStream, (ulong)TransportErrorCode.NoError)]
    [InlineData(0L, (int)StreamFrameKind.StopSending, (ulong)TransportErrorCode.NoError)]
    [InlineData(0L, (int)StreamFrameKind.MaxStreamData, (ulong)TransportErrorCode.NoError)]
    [InlineData(0L, (int)StreamFrameKind.StreamDataBlocked, (ulong)TransportErrorCode.NoError)]
    [InlineData(1L, (int)StreamFrameKind.Stream, (ulong)TransportErrorCode.NoError)]
    [InlineData(1L, (int)StreamFrameKind.ResetStream, (ulong)TransportErrorCode.NoError)]
    [InlineData(1L, (int)StreamFrameKind.StopSending, (ulong)TransportErrorCode.NoError)]
    [InlineData(1L, (int)StreamFrameKind.MaxStreamData, (ulong)TransportErrorCode.NoError)]
    [InlineData(1L, (int)StreamFrameKind.StreamDataBlocked, (ulong)TransportErrorCode.NoError)]
    public void FrameTypeAgainstStreamType(long id, int kindValue, ulong expectedValue)
    {
        var kind = (StreamFrameKind)kindValue;
        var expected = (TransportErrorCode)expectedValue;
        StreamTable client = NewTable(isServer: false);
        Assert.True(client.TryOpenLocalStream(unidirectional: false, out _)); // id 0
        Assert.True(client.TryOpenLocalStream(unidirectional: true, out _)); // id 2
        Assert.Equal(expected, Send(client, id, kind));
    }

    // The API layer learns the ID a caller-thread open will get from the table: the opens already under way count, and
    // the peer's limit bounds it.
    [Fact]
    public void PeekLocalStreamIdIsTheIdTheOpenGives()
    {
        StreamTable server = NewTable(isServer: true, maxStreams: 3);
        Assert.Equal(1, server.PeekLocalStreamId(unidirectional: false, ahead: 0));
        Assert.Equal(5, server.PeekLocalStreamId(unidirectional: false, ahead: 1));
        Assert.Equal(3, server.PeekLocalStreamId(unidirectional: true, ahead: 0));
        Assert.Equal(-1, server.PeekLocalStreamId(unidirectional: false, ahead: 3)); // beyond MAX_STREAMS
        long peeked = server.PeekLocalStreamId(unidirectional: false, ahead: 0);
        Assert.True(server.TryOpenLocalStream(unidirectional: false, out TransportStream? opened));
        Assert.Equal(peeked, opened.Id);
        Assert.Equal(9, server.PeekLocalStreamId(unidirectional: false, ahead: 1));
        Assert.Equal(-1, server.PeekLocalStreamId(unidirectional: false, ahead: 2));
    }

    [Theory]
    [InlineData((int)StreamFrameKind.Stream)]
    [InlineData((int)StreamFrameKind.ResetStream)]
    [InlineData((int)StreamFrameKind.StopSending)]
    [InlineData((int)StreamFrameKind.MaxStreamData)]
    [InlineData((int)StreamFrameKind.StreamDataBlocked)]
    public void FrameForLocalStreamNotYetOpenedIsStreamStateError(int kindValue)
    {
        var kind = (StreamFrameKind)kindValue;
        StreamTable client = NewTable(isServer: false);
        Assert.Equal(TransportErrorCode.StreamStateError, Send(client, 0, kind)); // own bidi 0 never opened
        Assert.True(client.TryOpenLocalStream(false, out _));
        Assert.Equal(TransportErrorCode.StreamStateError, Send(client, 4, kind)); // 0 opened, 4 not
        bool sendOnlyForbidden = kind is StreamFrameKind.Stream or StreamFrameKind.ResetStream or StreamFrameKind.StreamDataBlocked;
        Assert.Equal(TransportErrorCode.StreamStateError, Send(client, 6, kind)); // own uni never opened (or send-only)
        Assert.True(client.TryOpenLocalStream(true, out _));
        Assert.Equal(sendOnlyForbidden ? TransportErrorCode.StreamStateError : TransportErrorCode.NoError, Send(client, 2, kind));
    }

    [Fact]
    public void PeerStreamBeyondLimitIsStreamLimitError()
    {
        StreamTable server = NewTable(isServer: true, maxStreams: 2);
        Assert.Equal(TransportErrorCode.NoError, Send(server, 4, StreamFrameKind.Stream)); // index 1
        Assert.Equal(TransportErrorCode.StreamLimitError, Send(server, 8, StreamFrameKind.Stream)); // index 2
        Assert.Equal(TransportErrorCode.StreamLimitError, Send(server, 10, StreamFrameKind.ResetStream)); // uni index 2
        Assert.Equal(TransportErrorCode.StreamLimitError, Send(server, 8, StreamFrameKind.MaxStreamData));
    }

    [Fact]
    public void ImplicitOpeningAndAcceptOrder()
    {
        StreamTable server = NewTable(isServer: true);
        Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(8, 0, new byte[3], false, out _));
        Assert.Equal(3, server.Count); // 0, 4 and 8. RFC 9000 §3.2
        Assert.True(server.TryAcceptIncomingStream(out TransportStream? a));
        Assert.True(server.TryAcceptIncomingStream(out TransportStream? b));
        Assert.True(server.TryAcceptIncomingStream(out TransportStream? c));
        Assert.False(server.TryAcceptIncomingStream(out _));
        Assert.Equal((0L, 4L, 8L), (a.Id, b.Id, c.Id));
        Assert.False(a.IsLocal);
        Assert.NotNull(a.Send);
        Assert.Equal(3, c.Receive!.Buffer.ReadableBytes);
        Assert.Equal(1000, a.Send!.Credit.MaxData); // peer's initial_max_stream_data_bidi_local

        Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(2, 0, new byte[1], false, out _));
        Assert.True(server.TryAcceptIncomingStream(out TransportStream? uni));
        Assert.Null(uni.Send); // receive-only
        Assert.NotNull(uni.Receive);
    }

    [Fact]
    public void ClosedPeerStreamsReleaseCreditAndLateFramesAreIgnored()
    {
        StreamTable server = NewTable(isServer: true, maxStreams: 2);
        for (long id = 2; id <= 6; id += 4)
        {
            Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(id, 0, new byte[5], true, out _));
            Assert.True(server.TryGetStream(id, out TransportStream? s));
            Assert.False(server.TryRelease(s)); // not read yet
            s.Receive!.Read(new byte[10], out bool fin, out _);
            Assert.True(fin);
            Assert.True(server.TryRelease(s));
        }

        Assert.Equal(0, server.Count);
        Assert.True(server.RemoteUniLimit.NeedsMaxStreams);
        Assert.Equal(4, server.RemoteUniLimit.CommitMaxStreams());
        // A retransmitted frame for the closed stream 2 is ignored, not an error and not a new stream.
        Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(2, 0, new byte[5], true, out _));
        Assert.Equal(0, server.Count);
        Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(14, 0, new byte[1], false, out _)); // index 3 < 4
        Assert.Equal(TransportErrorCode.StreamLimitError, server.OnStreamFrame(18, 0, new byte[1], false, out _));
    }

    [Fact]
    public void LocalOpenWaitsForMaxStreamsAndSignalsBlocked()
    {
        StreamTable client = NewTable(isServer: false, maxStreams: 1);
        Assert.True(client.TryOpenLocalStream(false, out TransportStream? first));
        Assert.Equal(0L, first.Id);
        Assert.False(client.TryOpenLocalStream(false, out _));
        Assert.True(client.LocalBidiLimit.NeedsStreamsBlocked);
        Assert.Equal(TransportErrorCode.FrameEncodingError, client.OnMaxStreamsFrame(false, (1L << 60) + 1, out _));
        Assert.Equal(TransportErrorCode.NoError, client.OnMaxStreamsFrame(false, 2, out _));
        Assert.True(client.TryOpenLocalStream(false, out TransportStream? second));
        Assert.Equal(4L, second.Id);
        Assert.Equal(TransportErrorCode.TransportParameterError,
            client.ApplyPeerTransportParameters(0, 0, 0, 0, (1L << 60) + 1, 0, out _));
    }

    [Fact]
    public void RoundRobinOverSendableStreams()
    {
        StreamTable client = NewTable(isServer: false);
        var streams = new TransportStream[3];
        for (int i = 0; i < 3; i++)
        {
            Assert.True(client.TryOpenLocalStream(false, out TransportStream? s));
            s.Send!.Write(new byte[300], fin: true);
            streams[i] = s;
            client.MarkSendable(s);
            client.MarkSendable(s); // idempotent
        }

        var order = new List<long>();
        var packet = new byte[100];
        while (client.TryDequeueSendable(out TransportStream? s))
        {
            Assert.True(s.Send!.TryTakeNextToSend(packet, out _, out _, out _));
            order.Add(s.Id);
            client.RefreshSendable(s);
        }

        Assert.Equal(new long[] { 0, 4, 8, 0, 4, 8, 0, 4, 8 }, order);
        Assert.All(streams, s => Assert.Equal(SendStreamState.DataSent, s.Send!.State));
    }

    [Fact]
    public void MaxStreamDataWakesABlockedStream()
    {
        StreamTable client = NewTable(isServer: false);
        Assert.True(client.TryOpenLocalStream(false, out TransportStream? s));
        s.Send!.Write(new byte[2000], false);
        client.MarkSendable(s);
        Assert.True(client.TryDequeueSendable(out _));
        Assert.True(s.Send.TryTakeNextToSend(new byte[5000], out _, out int n, out _));
        Assert.Equal(1000, n);
        Assert.True(s.Send.NeedsStreamDataBlocked);
        s.Send.OnStreamDataBlockedSent(s.Send.BlockedLimit);
        Assert.False(client.RefreshSendable(s));
        Assert.Equal(TransportErrorCode.NoError, client.OnMaxStreamDataFrame(0, 3000, out _));
        Assert.True(client.TryDequeueSendable(out TransportStream? woken));
        Assert.Same(s, woken);
    }

    /// <summary>
    /// Sender and receiver wired back to back with a reader that consumes a little per round: the sender never gets
    /// ahead of the receive window, the receiver never stores more than its window, both buffers stay bounded, and
    /// all bytes arrive intact.
    /// </summary>
    [Fact]
    public void SlowReaderKeepsSenderAtTheLimitWithBoundedMemory()
    {
        const int window = 4096;
        const int total = 200_000;
        var random = new Random(5);
        byte[] data = new byte[total];
        random.NextBytes(data);

        var connRecv = new ReceiveFlowWindow(window * 4, window * 4);
        var connSend = new SendFlowCredit(connRecv.MaxData);
        var receiver = new ReceiveStream(0, window, window, connRecv, chunkSize: 512);
        var sender = new SendStream(0, window, connSend, maxBufferedBytes: 16384, chunkSize: 512);
        var output = new List<byte>(total);
        var packet = new byte[1200];
        var readBuf = new byte[300];
        int written = 0;
        long now = 0;
        int atLimitRounds = 0;
        while (receiver.State != ReceiveStreamState.DataRead)
        {
            now += 1000;
            if (written < total)
            {
                written += sender.Write(data.AsSpan(written, Math.Min(5000, total - written)), written + 5000 >= total);
            }

            // Send everything the credit allows; deliver it and acknowledge it immediately.
            while (sender.TryTakeNextToSend(packet, out long off, out int len, out bool fin))
            {
                Assert.Equal(TransportErrorCode.NoError, receiver.OnStreamFrame(off, packet.AsSpan(0, len), fin, out _));
                sender.OnStreamFrameAcked(off, len, fin);
            }

            Assert.True(sender.Credit.Sent <= receiver.Window.MaxData);
            if (sender.Credit.IsBlocked)
            {
                atLimitRounds++;
            }

            Assert.True(receiver.Buffer.BufferedBytes <= window);
            Assert.True(receiver.Buffer.AllocatedBytes <= window + 1024);
            Assert.True(sender.Buffer.AllocatedBytes <= 16384 + 1024);

            // Slow reader: 300 bytes per round.
            int n = receiver.Read(readBuf, out _, out _);
            output.AddRange(readBuf.AsSpan(0, n).ToArray());
            if (receiver.NeedsMaxStreamData)
            {
                sender.OnMaxStreamData(receiver.CommitMaxStreamData(now, smoothedRttUs: 1000));
            }

            if (connRecv.ShouldSendUpdate)
            {
                connSend.OnMaxDataReceived(connRecv.CommitUpdate(now, 1000));
            }
        }

        Assert.Equal(data, output.ToArray());
        Assert.Equal(window, receiver.Window.Window); // slow reads never auto-tuned the window up
        Assert.True(atLimitRounds > total / 300 / 2, $"sender at the limit in only {atLimitRounds} rounds");
        Assert.Equal(SendStreamState.DataRecvd, sender.State);
    }

    [Fact]
    public void BidirectionalStreamIsReleasedOnlyWhenBothPartsAreTerminal()
    {
        StreamTable server = NewTable(isServer: true, maxStreams: 2);
        Assert.Equal(TransportErrorCode.NoError, server.OnStreamFrame(0, 0, new byte[4], true, out _));
        Assert.True(server.TryAcceptIncomingStream(out TransportStream? s));
        s.Receive!.Read(new byte[4], out bool fin, out _);
        Assert.True(fin);
        Assert.False(s.IsClosed); // our sending part is still Ready
        s.Send!.Write(new byte[3], fin: true);
        Assert.True(server.RefreshSendable(s));
        Assert.True(server.TryDequeueSendable(out _));
        Assert.True(s.Send.TryTakeNextToSend(new byte[100], out long off, out int len, out bool sentFin));
        Assert.False(server.TryRelease(s));
        s.Send.OnStreamFrameAcked(off, len, sentFin);
        Assert.True(s.IsClosed);
        Assert.True(server.TryRelease(s));
        Assert.False(server.TryRelease(s));
        Assert.Equal(1, server.RemoteBidiLimit.ClosedCount);
        Assert.True(server.RemoteBidiLimit.NeedsMaxStreams); // half of a concurrency of 2 returned
    }

    [Fact]
    public void ConnectionBlockedStreamsStayQueuedAndSendableCountBoundsTheLoop()
    {
        StreamTable client = NewTable(isServer: false);
        var connection = client.ConnectionSendCredit;
        Assert.True(client.TryOpenLocalStream(false, out TransportStream? a));
        Assert.True(client.TryOpenLocalStream(false, out TransportStream? b));
        a.Send!.Write(new byte[900], false);
        b.Send!.Write(new byte[900], false);
        client.MarkSendable(a);
        client.MarkSendable(b);
        connection.AddSent(connection.Available - 500); // only 500 bytes of connection credit left

        int sent = 0;
        int visits = client.SendableCount;
        Assert.Equal(2, visits);
        for (int i = 0; i < visits && client.TryDequeueSendable(out TransportStream? s); i++)
        {
            if (s.Send!.TryTakeNextToSend(new byte[1200], out _, out int len, out _))
            {
                sent += len;
            }

            client.RefreshSendable(s);
        }

        Assert.Equal(500, sent);
        Assert.Equal(0, connection.Available);
        Assert.True(connection.NeedsBlockedFrame);
        Assert.Equal(2, client.SendableCount); // both still want to send once MAX_DATA arrives
        Assert.True(client.OnMaxDataFrame(connection.MaxData + 2000));
        Assert.True(client.TryDequeueSendable(out TransportStream? next));
        Assert.True(next.Send!.TryTakeNextToSend(new byte[1200], out _, out int more, out _));
        Assert.True(more > 0);
    }
}
