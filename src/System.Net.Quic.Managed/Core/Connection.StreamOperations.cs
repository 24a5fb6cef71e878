using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

/// <summary>The operations the API layer performs on streams. All run on the connection's (driver's) thread.</summary>
internal sealed partial class Connection
{
    /// <summary>Opens a local stream; false when the peer's stream limit is reached (wait for StreamsAvailable).</summary>
    public bool TryOpenStream(bool unidirectional, out long streamId)
    {
        RequestService();
        streamId = -1;
        // Before the handshake completes only a client with 0-RTT keys may open streams (RFC 9001 §4.6.1).
        if ((!_handshake.IsCompleted && !CanSendEarlyData) || _close.Phase != ConnectionPhase.Open) return false;
        if (!_streams.TryOpenLocalStream(unidirectional, out TransportStream? stream)) return false;
        streamId = stream.Id;
        TraceStreamOpened(streamId, locallyInitiated: true);
        return true;
    }

    /// <summary>Hands every stream the peer opened since the last call to the application (StreamOpened events).</summary>
    private void AcceptIncomingStreams()
    {
        while (_streams.TryAcceptIncomingStream(out TransportStream? incoming))
        {
            TraceStreamOpened(incoming.Id, locallyInitiated: false);
            Emit(ConnectionEventKind.StreamOpened, incoming.Id);
        }
    }

    /// <summary>
    /// Queues data (and optionally FIN) on a stream; returns the bytes accepted, limited by the stream's send buffer and
    /// by the connection's send budget (<see cref="ConnectionBufferBudget"/>). A stream the budget held back is told
    /// with StreamWritable once acknowledgments or MAX_DATA make room, one its own credit held back once MAX_STREAM_DATA
    /// raises it.
    /// </summary>
    public int WriteStream(long streamId, ReadOnlySpan<byte> data, bool fin)
    {
        RequestService();
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Send is null) return 0;
        // Reset (by us, or in answer to the peer's STOP_SENDING) or already finished: nothing more is accepted; the API
        // learns why from GetStopSendingCode / IsStreamWriteComplete. Peer-driven states must never throw here.
        if (stream.Send.State is not (SendStreamState.Ready or SendStreamState.Send) || stream.Send.Buffer.IsFinRequested) return 0;
        ConnectionBufferBudget budget = _streams.BufferBudget;
        _streams.ApplySendBufferLimit(stream.Send);
        long room = BudgetRoom(stream.Send, out long streamCredit);
        ReadOnlySpan<byte> taken = data;
        if (room < data.Length)
        {
            // Held back by the stream's credit alone: MAX_STREAM_DATA wakes it (OnStreamSendSideChanged).
            if (budget.WaitsOnBudget(streamCredit, room)) budget.AddWaiter(streamId);
            taken = data.Slice(0, (int)room);
        }
        int accepted = stream.Send.Write(taken, fin: false);
        // FIN goes with the data only when all of it fitted; otherwise the caller writes the rest, then FIN.
        if (fin && accepted == data.Length) stream.Send.Write(ReadOnlySpan<byte>.Empty, fin: true);
        _streams.RefreshSendable(stream);
        return accepted;
    }

    /// <summary>What the peer's connection credit lets the path hold: the bytes in flight plus the credit left.</summary>
    private long FlowWindow() => _streams.ConnectionSendCredit.Available + _recovery.CongestionController.BytesInFlight;

    /// <summary>The bytes the send budget lets <paramref name="send"/> add now (<see cref="ConnectionBufferBudget.RoomFor"/>);
    /// <paramref name="streamCredit"/>: what its own credit still allows.</summary>
    private long BudgetRoom(SendStream send, out long streamCredit)
    {
        streamCredit = Math.Max(0, send.Credit.MaxData - send.Buffer.WriteOffset);
        return _streams.BufferBudget.RoomFor(Math.Max(0, send.FlowLimitOffset - send.Buffer.WriteOffset), streamCredit, FlowWindow());
    }

    /// <summary>Bytes the stream's send side accepts now (0 when full, reset, or finished).</summary>
    public long GetWritableBytes(long streamId)
    {
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Send is null) return 0;
        _streams.ApplySendBufferLimit(stream.Send);
        return Math.Min(stream.Send.WritableBytes, BudgetRoom(stream.Send, out _));
    }

    /// <summary>The connection's stream buffering: send budget and pooled chunks.</summary>
    internal ConnectionBufferBudget BufferBudget => _streams.BufferBudget;

    /// <summary>
    /// After acknowledgments or MAX_DATA: the send budget follows the congestion window (as far as the peer's connection
    /// credit lets the connection use it), and streams whose writes it held back are
    /// told (StreamWritable) while it has room, one 16 KiB quantum each.
    /// </summary>
    private void AfterSendBudgetFreed()
    {
        ConnectionBufferBudget budget = _streams.BufferBudget;
        long flowWindow = FlowWindow();
        budget.OnCongestionWindow(_recovery.CongestionController.CongestionWindow, flowWindow);
        budget.OnPathEstimate(_recovery.CongestionController.BytesInFlight, _recovery.Rtt.MinRttUs, _recovery.Rtt.SmoothedRttUs);
        if (!budget.HasWaiters) return;
        long room = budget.WakeRoom(flowWindow);
        while (budget.TryTakeWaiter(ref room, WakeQuantumBytes, out long streamId)) Emit(ConnectionEventKind.StreamWritable, streamId);
    }

    private const long WakeQuantumBytes = 16 * 1024;

    /// <summary>Reads received data in order. <paramref name="fin"/> once all data was read; <paramref name="reset"/> when the peer reset the stream.</summary>
    public int ReadStream(long streamId, Span<byte> destination, out bool fin, out bool reset, out ulong resetErrorCode)
        => ReadStream(streamId, destination, holdCredit: false, out fin, out reset, out resetErrorCode);

    /// <summary>
    /// As <see cref="ReadStream(long, Span{byte}, out bool, out bool, out ulong)"/>; with <paramref name="holdCredit"/>
    /// the bytes only move to the application's buffer and keep their flow-control credit until
    /// <see cref="ReleaseStreamCredit"/> says the application consumed them.
    /// </summary>
    public int ReadStream(long streamId, Span<byte> destination, bool holdCredit, out bool fin, out bool reset, out ulong resetErrorCode)
    {
        RequestService();
        fin = false;
        reset = false;
        resetErrorCode = 0;
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Receive is null)
        {
            fin = true;
            return 0;
        }
        int n = stream.Receive.Read(destination, out fin, out reset, holdCredit);
        if (reset) resetErrorCode = stream.Receive.ResetErrorCode;
        _streams.RefreshSendable(stream); // MAX_STREAM_DATA may be due
        ReleaseIfClosed(stream);
        return n;
    }

    /// <summary>
    /// As <see cref="ReadStream(long, Span{byte}, bool, out bool, out bool, out ulong)"/> with held credit, without a
    /// copy: the whole chunk of the stream's receive buffer holding its next bytes, once all of them arrived
    /// (<see cref="ReceiveBuffer.TryTakeChunk"/>). The caller owns the chunk. False when none can be taken; a read then
    /// copies what is readable.
    /// </summary>
    public bool TryTakeStreamChunk(long streamId, out byte[]? chunk, out int start, out int length, out bool fin)
    {
        chunk = null;
        start = length = 0;
        fin = false;
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Receive is null) return false;
        if (!stream.Receive.TryTakeChunk(out chunk, out start, out length, out fin)) return false;
        RequestService();
        _streams.RefreshSendable(stream); // MAX_STREAM_DATA may be due
        ReleaseIfClosed(stream);
        return true;
    }

    /// <summary>Contiguous bytes a read would return now.</summary>
    public long GetReadableBytes(long streamId)
        => _streams.TryGetStream(streamId, out TransportStream? stream) && stream.Receive is not null ? stream.Receive.Buffer.ReadableBytes : 0;

    /// <summary>The stream's current receive window (it grows by auto-tuning); 0 when the stream is gone.</summary>
    public long GetStreamReceiveWindow(long streamId)
        => _streams.TryGetStream(streamId, out TransportStream? stream) && stream.Receive is not null ? stream.Receive.Window.Window : 0;

    /// <summary>
    /// The application consumed <paramref name="bytes"/> it had buffered (read with holdCredit): their credit returns
    /// to the stream and connection windows (MAX_STREAM_DATA / MAX_DATA may be due). long.MaxValue releases all.
    /// </summary>
    public void ReleaseStreamCredit(long streamId, long bytes)
    {
        RequestService();
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Receive is null) return;
        stream.Receive.ReleaseCredit(bytes);
        _streams.RefreshSendable(stream);
        ReleaseIfClosed(stream);
    }

    /// <summary>Abruptly ends the send side (RESET_STREAM, RFC 9000 §19.4).</summary>
    public void ResetStream(long streamId, ulong applicationErrorCode)
    {
        RequestService();
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Send is null) return;
        stream.Send.Reset(applicationErrorCode);
        _streams.RefreshSendable(stream);
    }

    /// <summary>Asks the peer to stop sending (STOP_SENDING, RFC 9000 §19.5).</summary>
    public void StopSending(long streamId, ulong applicationErrorCode)
    {
        RequestService();
        if (!_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Receive is null) return;
        stream.Receive.StopSending(applicationErrorCode);
        _streams.RefreshSendable(stream);
        ReleaseIfClosed(stream);
    }

    /// <summary>
    /// Sets a stream's send priority (RFC 9218 model: urgency 0..7, lower first; incremental streams of one urgency
    /// share round-robin, non-incremental ones go one at a time in id order). Local only: nothing is signalled. Returns
    /// false when the stream is gone.
    /// </summary>
    public bool SetStreamPriority(long streamId, int urgency, bool incremental)
    {
        RequestService();
        if (!_streams.TryGetStream(streamId, out TransportStream? stream)) return false;
        _streams.SetPriority(stream, urgency, incremental);
        return true;
    }

    /// <summary>The stream's write side: stop-sending code from the peer (the app must stop writing), or null.</summary>
    public ulong? GetStopSendingCode(long streamId)
        => _streams.TryGetStream(streamId, out TransportStream? stream) ? stream.Send?.StopSendingErrorCode : null;

    /// <summary>True when everything written, FIN included, was acknowledged.</summary>
    public bool IsStreamWriteComplete(long streamId)
        => !_streams.TryGetStream(streamId, out TransportStream? stream) || stream.Send is null || stream.Send.IsTerminal;

    /// <summary>
    /// Starts a key update (RFC 9001 §6.1): allowed once the handshake is confirmed and a packet of the current phase
    /// was acknowledged. Returns false when not allowed now, and once the connection is closing (nothing more to protect).
    /// </summary>
    public bool InitiateKeyUpdate()
    {
        RequestService();
        if (Phase != ConnectionPhase.Open) return false;
        PacketSpaceState app = Space(System.Net.Quic.Managed.Recovery.PacketNumberSpace.ApplicationData);
        if (!_handshake.IsConfirmed || app.SendPhaseKeys is null || app.ReceivePhaseKeys is null) return false;
        if (app.SendPhaseKeys.KeyPhase != app.ReceivePhaseKeys.KeyPhase) return false; // the previous update is not answered yet
        if (_recovery.GetTracker(System.Net.Quic.Managed.Recovery.PacketNumberSpace.ApplicationData).LargestAcked < _currentSendPhaseFirstPacket) return false;
        app.SendPhaseKeys.Update();
        _currentSendPhaseFirstPacket = app.NextPacketNumber;
        Statistics.KeyUpdates++;
        return true;
    }

}
