using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>
/// A connection's released bidirectional streams serve its next ones (<see cref="StreamTable.RecycledStreams"/>):
/// request/response streams, one after another, allocate no stream state once warmed up, and a recycled stream
/// behaves as a new one.
/// </summary>
public class StreamRecyclingTests
{
    private static readonly StreamTableOptions Options = new() { InitialMaxStreamDataBidiLocal = 64 * 1024, InitialMaxStreamDataBidiRemote = 64 * 1024 };

    private sealed class Pair
    {
        public readonly StreamTable Client = new(isServer: false, Options);
        public readonly StreamTable Server = new(isServer: true, Options);
        public readonly byte[] Request = new byte[72];
        public readonly byte[] Response = new byte[64 * 1024];
        public readonly byte[] Packet = new byte[1400];
        public readonly byte[] Sink = new byte[16 * 1024];

        public Pair()
        {
            for (int i = 0; i < Response.Length; i++) Response[i] = (byte)(i * 7);
            for (int i = 0; i < Request.Length; i++) Request[i] = (byte)(i + 1);
            Check(Client.ApplyPeerTransportParameters(1L << 40, 64 * 1024, 64 * 1024, 64 * 1024, 1L << 40, 0, out _));
            Check(Server.ApplyPeerTransportParameters(1L << 40, 64 * 1024, 64 * 1024, 64 * 1024, 0, 0, out _));
        }

        /// <summary>
        /// One stream: the client opens it and sends the request with FIN, the server reads it and answers with FIN,
        /// every frame acknowledged, the client reads the answer; both release the stream. Returns its id.
        /// </summary>
        public long Exchange()
        {
            if (!Client.TryOpenLocalStream(unidirectional: false, out TransportStream? outbound)) throw new InvalidOperationException("no stream credit");
            long id = outbound.Id;
            Move(outbound.Send!, Server, id, outbound.Send!.Write(Request, fin: true) == Request.Length);
            if (!Server.TryAcceptIncomingStream(out TransportStream? inbound) || inbound.Id != id) throw new InvalidOperationException("not accepted");
            long got = ReadToEnd(inbound.Receive!);
            if (got != Request.Length) throw new InvalidOperationException($"request of {got} bytes");
            int written = inbound.Send!.Write(Response, fin: true);
            if (written != Response.Length) throw new InvalidOperationException("response not taken");
            Move(inbound.Send, Client, id, true);
            got = ReadToEnd(outbound.Receive!);
            if (got != Response.Length) throw new InvalidOperationException($"response of {got} bytes");
            if (!Server.TryRelease(inbound) || !Client.TryRelease(outbound)) throw new InvalidOperationException("not released");
            if (Server.RemoteBidiLimit.NeedsMaxStreams) Client.OnMaxStreamsFrame(false, Server.RemoteBidiLimit.CommitMaxStreams(), out _);
            // The connection windows move on as MAX_DATA would move them (the peers' credit is unlimited here).
            if (Client.NeedsMaxData) Client.CommitMaxData(0, 1000);
            if (Server.NeedsMaxData) Server.CommitMaxData(0, 1000);
            return id;
        }

        /// <summary>Every frame <paramref name="send"/> has goes to <paramref name="to"/> and is acknowledged.</summary>
        private void Move(SendStream send, StreamTable to, long id, bool taken)
        {
            if (!taken) throw new InvalidOperationException("write not taken");
            while (send.TryTakeNextToSend(Packet, out long offset, out int length, out bool fin))
            {
                Check(to.OnStreamFrame(id, offset, Packet.AsSpan(0, length), fin, out _));
                send.OnStreamFrameAcked(offset, length, fin);
            }
        }

        private long ReadToEnd(ReceiveStream receive)
        {
            long total = 0;
            while (true)
            {
                int n = receive.Read(Sink, out bool fin, out _);
                total += n;
                if (fin || n == 0) return total;
            }
        }

        private static void Check(TransportErrorCode error)
        {
            if (error != TransportErrorCode.NoError) throw new InvalidOperationException(error.ToString());
        }
    }

    [Fact]
    public void RequestResponseStreamsAllocateNothingOnceWarmedUp()
    {
        var pair = new Pair();
        for (int i = 0; i < 50; i++) pair.Exchange();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++) pair.Exchange();
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(0, pair.Client.Count);
        Assert.Equal(0, pair.Server.Count);
    }

    [Fact]
    public void ARecycledStreamStartsAsANewOne()
    {
        var pair = new Pair();
        long first = pair.Exchange();
        Assert.True(pair.Client.TryOpenLocalStream(unidirectional: false, out TransportStream? reused));
        Assert.Equal(first + 4, reused.Id);
        Assert.False(reused.IsReleased);
        Assert.True(reused.IsLocal);
        Assert.Equal(SendStreamState.Ready, reused.Send!.State);
        Assert.Equal(0, reused.Send.Buffer.WriteOffset);
        Assert.Equal(0, reused.Send.Buffer.AckedOffset);
        Assert.Equal(64 * 1024, reused.Send.Credit.MaxData);
        Assert.Equal(0, reused.Send.Credit.Sent);
        Assert.Equal(reused.Id, reused.Send.StreamId);
        Assert.Equal(ReceiveStreamState.Recv, reused.Receive!.State);
        Assert.Equal(0, reused.Receive.Buffer.ReadOffset);
        Assert.Equal(-1, reused.Receive.Buffer.FinalSize);
        Assert.Equal(64 * 1024, reused.Receive.Window.MaxData);
        Assert.Equal(0, reused.Receive.Window.Received);
        Assert.Equal(0, reused.Receive.HeldCredit);
        Assert.Equal(reused.Id, reused.Receive.StreamId);
        Assert.Equal(StreamTable.DefaultUrgency, reused.Urgency);
    }

    [Fact]
    public void AStreamReleasedWhileStillQueuedIsNotRecycled()
    {
        var table = new StreamTable(isServer: false, Options);
        Assert.Equal(TransportErrorCode.NoError, table.ApplyPeerTransportParameters(1L << 40, 64 * 1024, 64 * 1024, 64 * 1024, 10, 0, out _));
        Assert.True(table.TryOpenLocalStream(unidirectional: false, out TransportStream? first));
        first.Send!.Write(new byte[10], fin: true);
        table.MarkSendable(first); // queued: the scheduler still refers to it
        first.Send.Reset(1);
        first.Send.OnResetFrameSent();
        first.Send.OnResetFrameAcked();
        first.Receive!.OnResetStream(0, 0, out _);
        first.Receive.Read(new byte[1], out _, out _);
        Assert.True(table.TryRelease(first));
        Assert.True(table.TryOpenLocalStream(unidirectional: false, out TransportStream? second));
        Assert.NotSame(first, second);
        Assert.True(first.IsReleased);
    }
}
