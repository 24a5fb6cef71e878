using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

public class SendStreamTests
{
    private static SendStream NewStream(long credit = 1000, long connectionCredit = 1_000_000, SendFlowCredit? connection = null)
        => new SendStream(0, credit, connection ?? new SendFlowCredit(connectionCredit), maxBufferedBytes: 10_000, chunkSize: 64);

    private static (long Offset, int Length, bool Fin)? Take(SendStream stream, int max = 1000)
    {
        var dest = new byte[max];
        return stream.TryTakeNextToSend(dest, out long offset, out int length, out bool fin) ? (offset, length, fin) : null;
    }

    [Fact]
    public void HappyPath_Ready_Send_DataSent_DataRecvd()
    {
        SendStream stream = NewStream();
        Assert.Equal(SendStreamState.Ready, stream.State);
        stream.Write(new byte[100], fin: false);
        Assert.Equal(SendStreamState.Ready, stream.State); // buffered only
        var a = Take(stream, 60)!.Value;
        Assert.Equal(SendStreamState.Send, stream.State);
        stream.Write(default, fin: true);
        var b = Take(stream)!.Value;
        Assert.True(b.Fin);
        Assert.Equal(SendStreamState.DataSent, stream.State);
        Assert.Throws<InvalidOperationException>(() => stream.Write(new byte[1], false));
        stream.OnStreamFrameAcked(b.Offset, b.Length, b.Fin);
        Assert.Equal(SendStreamState.DataSent, stream.State);
        stream.OnStreamFrameLost(a.Offset, a.Length, a.Fin);
        Assert.True(stream.HasStreamDataToSend); // retransmission in Data Sent
        var r = Take(stream)!.Value;
        Assert.Equal((0L, 60, false), r);
        stream.OnStreamFrameAcked(r.Offset, r.Length, r.Fin);
        Assert.Equal(SendStreamState.DataRecvd, stream.State);
        Assert.True(stream.IsTerminal);
        Assert.False(stream.WantsToSend);
        Assert.False(stream.Reset(1)); // nothing to reset in Data Recvd
    }

    [Fact]
    public void StreamDataBlockedMovesReadyToSend()
    {
        SendStream stream = NewStream(credit: 0);
        stream.Write(new byte[10], false);
        Assert.Null(Take(stream));
        Assert.True(stream.NeedsStreamDataBlocked);
        Assert.Equal(0, stream.BlockedLimit);
        stream.OnStreamDataBlockedSent(0);
        Assert.Equal(SendStreamState.Send, stream.State);
        Assert.False(stream.NeedsStreamDataBlocked);
        Assert.True(stream.OnMaxStreamData(5));
        Assert.Equal(5, Take(stream)!.Value.Length);
        Assert.True(stream.NeedsStreamDataBlocked); // blocked again at a new limit
    }

    [Theory]
    [InlineData(0)] // Ready
    [InlineData(1)] // Send
    [InlineData(2)] // Data Sent
    public void ResetFromEachResettableState(int reach)
    {
        var connection = new SendFlowCredit(1_000_000);
        SendStream stream = NewStream(connection: connection);
        stream.Write(new byte[100], fin: reach == 2);
        if (reach >= 1)
        {
            Take(stream, 70);
        }

        if (reach == 2)
        {
            Take(stream);
            Assert.Equal(SendStreamState.DataSent, stream.State);
        }

        Assert.True(stream.Reset(77));
        Assert.Equal(SendStreamState.ResetSent, stream.State);
        Assert.Equal(77UL, stream.ResetErrorCode);
        Assert.Equal(reach switch { 0 => 0, 1 => 70, _ => 100 }, stream.ResetFinalSize); // credit consumed, RFC 9000 §4.5
        Assert.Equal(0, stream.Buffer.AllocatedBytes);
        Assert.False(stream.HasStreamDataToSend);
        Assert.True(stream.NeedsResetFrame);
        Assert.False(stream.Reset(78)); // once
        stream.OnResetFrameSent();
        Assert.False(stream.NeedsResetFrame);
        stream.OnResetFrameLost();
        Assert.True(stream.NeedsResetFrame);
        stream.OnResetFrameSent();
        stream.OnResetFrameAcked();
        Assert.Equal(SendStreamState.ResetRecvd, stream.State);
        Assert.True(stream.IsTerminal);
        stream.OnResetFrameLost();
        Assert.False(stream.NeedsResetFrame);
        Assert.Throws<InvalidOperationException>(() => stream.Write(new byte[1], false));
    }

    [Fact]
    public void StopSendingForcesResetWithPeerCode()
    {
        SendStream stream = NewStream();
        stream.Write(new byte[10], false);
        Take(stream);
        Assert.True(stream.OnStopSending(42));
        Assert.Equal(SendStreamState.ResetSent, stream.State);
        Assert.Equal(42UL, stream.ResetErrorCode);
        Assert.Equal(42UL, stream.StopSendingErrorCode);
        Assert.True(stream.NeedsResetFrame);
        Assert.False(stream.OnStopSending(43)); // repeated STOP_SENDING: no second reset
    }

    [Fact]
    public void StopSendingAfterEverythingAckedDoesNothing()
    {
        SendStream stream = NewStream();
        stream.Write(new byte[10], true);
        var f = Take(stream)!.Value;
        stream.OnStreamFrameAcked(f.Offset, f.Length, f.Fin);
        Assert.Equal(SendStreamState.DataRecvd, stream.State);
        Assert.False(stream.OnStopSending(1));
        Assert.Equal(SendStreamState.DataRecvd, stream.State);
    }

    [Fact]
    public void NewDataChargesStreamAndConnectionCreditButRetransmissionsDoNot()
    {
        var connection = new SendFlowCredit(150);
        var s1 = new SendStream(0, 100, connection, 10_000);
        var s2 = new SendStream(4, 100, connection, 10_000);
        s1.Write(new byte[200], false);
        s2.Write(new byte[200], false);
        Assert.Equal(100, Take(s1)!.Value.Length); // stream limit
        Assert.Equal(50, Take(s2)!.Value.Length); // connection limit
        Assert.Equal(0, connection.Available);
        Assert.Null(Take(s2));
        s1.OnStreamFrameLost(0, 100, false);
        Assert.Equal(100, Take(s1)!.Value.Length); // retransmission needs no credit
        Assert.Equal(150, connection.Sent);
        Assert.True(connection.NeedsBlockedFrame);
    }
}
