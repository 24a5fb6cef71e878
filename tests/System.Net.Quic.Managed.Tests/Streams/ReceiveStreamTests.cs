using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Streams;

public class ReceiveStreamTests
{
    private static ReceiveStream NewStream(long window = 1000, ReceiveFlowWindow? connection = null)
        => new ReceiveStream(1, window, window * 4, connection ?? new ReceiveFlowWindow(1_000_000, 1_000_000), chunkSize: 64);

    private static TransportErrorCode Frame(ReceiveStream s, long offset, int length, bool fin = false)
        => s.OnStreamFrame(offset, new byte[length], fin, out _);

    [Fact]
    public void Recv_SizeKnown_DataRecvd_DataRead()
    {
        ReceiveStream s = NewStream();
        Assert.Equal(ReceiveStreamState.Recv, s.State);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 50, 50, fin: true));
        Assert.Equal(ReceiveStreamState.SizeKnown, s.State);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 0, 50));
        Assert.Equal(ReceiveStreamState.DataRecvd, s.State);
        var dest = new byte[60];
        Assert.Equal(60, s.Read(dest, out bool fin, out bool reset));
        Assert.False(fin);
        Assert.False(reset);
        Assert.Equal(ReceiveStreamState.DataRecvd, s.State);
        Assert.Equal(40, s.Read(dest, out fin, out _));
        Assert.True(fin);
        Assert.Equal(ReceiveStreamState.DataRead, s.State);
        Assert.True(s.IsTerminal);
        Assert.Equal(0, s.Read(dest, out fin, out _));
        Assert.True(fin); // FIN keeps being reported
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 0, 100, fin: true)); // duplicate: ignored
        Assert.Equal(TransportErrorCode.FinalSizeError, Frame(s, 0, 101));
    }

    [Fact]
    public void FinFrameCompletingEverythingGoesStraightToDataRecvd()
    {
        ReceiveStream s = NewStream();
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 0, 10, fin: true));
        Assert.Equal(ReceiveStreamState.DataRecvd, s.State);
        ReceiveStream empty = NewStream();
        Assert.Equal(TransportErrorCode.NoError, Frame(empty, 0, 0, fin: true));
        Assert.Equal(ReceiveStreamState.DataRecvd, empty.State);
        Assert.Equal(0, empty.Read(new byte[1], out bool fin, out _));
        Assert.True(fin);
        Assert.Equal(ReceiveStreamState.DataRead, empty.State);
    }

    [Theory]
    [InlineData(false)] // from Recv
    [InlineData(true)]  // from Size Known
    public void ResetRecvdThenResetRead(bool sizeKnown)
    {
        var connection = new ReceiveFlowWindow(10_000, 10_000);
        ReceiveStream s = NewStream(connection: connection);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 0, 30));
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 100, 20, fin: sizeKnown));
        Assert.Equal(sizeKnown ? ReceiveStreamState.SizeKnown : ReceiveStreamState.Recv, s.State);
        Assert.Equal(TransportErrorCode.NoError, s.OnResetStream(9, 120, out _));
        Assert.Equal(ReceiveStreamState.ResetRecvd, s.State);
        Assert.Equal(9UL, s.ResetErrorCode);
        Assert.Equal(0, s.Buffer.AllocatedBytes);
        // The connection is charged up to the final size and all of it is released (never read). RFC 9000 §4.5.
        Assert.Equal(120, connection.Received);
        Assert.Equal(120, connection.Consumed);
        Assert.False(s.NeedsMaxStreamData);
        Assert.Equal(0, s.Read(new byte[10], out bool fin, out bool reset));
        Assert.True(reset);
        Assert.False(fin);
        Assert.Equal(ReceiveStreamState.ResetRead, s.State);
        Assert.True(s.IsTerminal);
        // Later data must still agree with the final size; duplicates are ignored.
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 30, 10));
        Assert.Equal(TransportErrorCode.FinalSizeError, Frame(s, 110, 20));
        Assert.Equal(TransportErrorCode.FinalSizeError, s.OnResetStream(9, 121, out _));
        Assert.Equal(TransportErrorCode.NoError, s.OnResetStream(9, 120, out _));
    }

    [Fact]
    public void ResetFinalSizeChecks()
    {
        ReceiveStream known = NewStream();
        Frame(known, 0, 10, fin: true);
        Assert.Equal(TransportErrorCode.FinalSizeError, known.OnResetStream(1, 11, out _)); // changes the final size
        Assert.Equal(TransportErrorCode.FinalSizeError, known.OnResetStream(1, 9, out _));

        ReceiveStream below = NewStream();
        Frame(below, 0, 50);
        Assert.Equal(TransportErrorCode.FinalSizeError, below.OnResetStream(1, 49, out string? reason));
        Assert.NotNull(reason);
        Assert.Equal(ReceiveStreamState.Recv, below.State);

        ReceiveStream beyond = NewStream(window: 100);
        Assert.Equal(TransportErrorCode.FlowControlError, beyond.OnResetStream(1, 101, out _));
        var connection = new ReceiveFlowWindow(50, 50);
        ReceiveStream conn = NewStream(window: 100, connection: connection);
        Assert.Equal(TransportErrorCode.FlowControlError, conn.OnResetStream(1, 51, out _));
        Assert.Equal(ReceiveStreamState.Recv, conn.State);
        Assert.Equal(0, connection.Received);
    }

    [Fact]
    public void ResetInDataRecvdKeepsDeliveringData()
    {
        ReceiveStream s = NewStream();
        Frame(s, 0, 10, fin: true);
        Assert.Equal(TransportErrorCode.NoError, s.OnResetStream(5, 10, out _));
        Assert.Equal(ReceiveStreamState.DataRecvd, s.State);
        Assert.Equal(10, s.Read(new byte[20], out bool fin, out bool reset));
        Assert.True(fin);
        Assert.False(reset);
    }

    [Fact]
    public void StreamAndConnectionFlowControlViolations()
    {
        var connection = new ReceiveFlowWindow(150, 150);
        ReceiveStream a = NewStream(window: 100, connection: connection);
        ReceiveStream b = new ReceiveStream(5, 100, 100, connection);
        Assert.Equal(TransportErrorCode.FlowControlError, Frame(a, 0, 101));
        Assert.Equal(TransportErrorCode.NoError, Frame(a, 0, 100));
        Assert.Equal(TransportErrorCode.NoError, Frame(a, 0, 100)); // retransmission: no new credit used
        Assert.Equal(TransportErrorCode.FlowControlError, Frame(b, 0, 51)); // connection MAX_DATA 150
        Assert.Equal(0, b.Window.Received);
        Assert.Equal(0, b.Buffer.BufferedBytes);
        Assert.Equal(TransportErrorCode.NoError, Frame(b, 0, 50));
        Assert.Equal(150, connection.Received);
    }

    [Fact]
    public void MaxStreamDataOnlyWhileSizeUnknown()
    {
        var connection = new ReceiveFlowWindow(100_000, 100_000);
        ReceiveStream s = NewStream(window: 100, connection: connection);
        Frame(s, 0, 100);
        Assert.False(s.NeedsMaxStreamData);
        s.Read(new byte[51], out _, out _);
        Assert.True(s.NeedsMaxStreamData);
        Assert.Equal(151, s.CommitMaxStreamData(nowUs: 1_000_000, smoothedRttUs: 1));
        Assert.Equal(51, connection.Consumed);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 100, 51));
        s.OnMaxStreamDataLost(151);
        Assert.True(s.NeedsMaxStreamData);
        s.CommitMaxStreamData(1_000_001, 1);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 151, 0, fin: true));
        s.Read(new byte[1000], out _, out _);
        Assert.False(s.NeedsMaxStreamData); // the final size is known: no more credit needed
    }

    [Fact]
    public void StopSendingDiscardsAndReleasesCredit()
    {
        var connection = new ReceiveFlowWindow(10_000, 10_000);
        ReceiveStream s = NewStream(window: 1000, connection: connection);
        Frame(s, 0, 300);
        s.StopSending(7);
        Assert.True(s.NeedsStopSendingFrame);
        Assert.Equal(7UL, s.StopSendingErrorCode);
        Assert.Equal(0, s.Buffer.AllocatedBytes);
        Assert.Equal(300, connection.Consumed);
        Assert.Equal(TransportErrorCode.NoError, Frame(s, 300, 200));
        Assert.Equal(500, connection.Consumed); // discarded data keeps releasing connection credit
        Assert.Equal(0, s.Buffer.AllocatedBytes);
        Assert.False(s.NeedsMaxStreamData);
        s.OnStopSendingFrameSent();
        Assert.False(s.NeedsStopSendingFrame);
        s.OnStopSendingFrameLost();
        Assert.True(s.NeedsStopSendingFrame);
        Assert.Equal(TransportErrorCode.NoError, s.OnResetStream(7, 500, out _));
        Assert.Equal(ReceiveStreamState.ResetRead, s.State); // abandoned by the app: no read needed
        Assert.False(s.NeedsStopSendingFrame);
        Assert.Equal(500, connection.Consumed);
    }

    [Fact]
    public void StopSendingThenFinOrResetReachesTerminalStateWithoutReads()
    {
        ReceiveStream fin = NewStream();
        Frame(fin, 0, 10);
        fin.StopSending(3);
        Assert.Equal(ReceiveStreamState.Recv, fin.State);
        Assert.Equal(TransportErrorCode.NoError, Frame(fin, 10, 10, fin: true));
        Assert.Equal(ReceiveStreamState.DataRead, fin.State);
        Assert.True(fin.IsTerminal);
        Assert.False(fin.NeedsStopSendingFrame); // all data arrived: STOP_SENDING is moot

        ReceiveStream reset = NewStream();
        reset.StopSending(3);
        Assert.Equal(TransportErrorCode.NoError, reset.OnResetStream(3, 0, out _));
        Assert.Equal(ReceiveStreamState.ResetRead, reset.State);

        ReceiveStream done = NewStream();
        Frame(done, 0, 10, fin: true);
        done.StopSending(3); // Data Recvd: nothing to ask the peer, just drop the data
        Assert.False(done.NeedsStopSendingFrame);
        Assert.Equal(ReceiveStreamState.DataRead, done.State);
        Assert.Equal(0, done.Buffer.AllocatedBytes);
    }

    [Fact]
    public void HeldCreditIsReturnedOnlyWhenReleased()
    {
        var connection = new ReceiveFlowWindow(10_000, 10_000);
        ReceiveStream s = NewStream(window: 1000, connection: connection);
        Frame(s, 0, 800);
        // Moved to the application's buffer, not consumed yet: no credit back, no MAX_STREAM_DATA.
        Assert.Equal(800, s.Read(new byte[1000], out bool fin, out _, holdCredit: true));
        Assert.False(fin);
        Assert.Equal(800, s.HeldCredit);
        Assert.Equal(0, s.Window.Consumed);
        Assert.Equal(0, connection.Consumed);
        Assert.False(s.NeedsMaxStreamData);
        Assert.Equal(TransportErrorCode.FlowControlError, Frame(s, 800, 201)); // the window still counts them
        s.ReleaseCredit(600);
        Assert.Equal(200, s.HeldCredit);
        Assert.Equal(600, s.Window.Consumed);
        Assert.Equal(600, connection.Consumed);
        Assert.True(s.NeedsMaxStreamData);
        s.ReleaseCredit(1000); // at most what is held
        Assert.Equal(0, s.HeldCredit);
        Assert.Equal(800, connection.Consumed);
    }

    [Fact]
    public void ResetAndStopSendingReleaseHeldCredit()
    {
        var connection = new ReceiveFlowWindow(10_000, 10_000);
        ReceiveStream reset = NewStream(window: 1000, connection: connection);
        Frame(reset, 0, 300);
        reset.Read(new byte[100], out _, out _, holdCredit: true);
        Assert.Equal(TransportErrorCode.NoError, reset.OnResetStream(9, 400, out _));
        Assert.Equal(0, reset.HeldCredit);
        Assert.Equal(400, connection.Consumed); // held, unread and never sent: all released
        reset.ReleaseCredit(100); // a late report from the application changes nothing
        Assert.Equal(400, connection.Consumed);

        ReceiveStream finished = new ReceiveStream(5, 1000, 1000, connection);
        Assert.Equal(TransportErrorCode.NoError, finished.OnStreamFrame(0, new byte[50], fin: true, out _));
        finished.Read(new byte[100], out bool fin, out _, holdCredit: true);
        Assert.True(fin);
        Assert.True(finished.IsTerminal);
        Assert.Equal(50, finished.HeldCredit);
        var stream = new TransportStream(5, isLocal: false, send: null, receive: finished);
        Assert.False(stream.IsClosed); // kept until the application consumed what it buffered
        finished.StopSending(3); // the application gave up on it: credit back, and the stream may go
        Assert.Equal(0, finished.HeldCredit);
        Assert.Equal(450, connection.Consumed);
        Assert.True(stream.IsClosed);
    }
}
