using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The receiving part of a stream: its <see cref="ReceiveBuffer"/>, stream-level window, the shared connection-level
/// window, and the state machine of RFC 9000 §3.2. Every peer-caused problem comes back as a
/// <see cref="TransportErrorCode"/> plus reason; on error nothing changes.
/// </summary>
internal sealed class ReceiveStream
{
    private readonly ReceiveBuffer _buffer;
    private readonly ReceiveFlowWindow _window;
    private readonly ReceiveFlowWindow _connectionWindow;
    private bool _stopSendingPending;
    private bool _stopSendingRequested;
    private long _heldCredit;

    public ReceiveStream(long streamId, long initialWindow, long maxWindow, ReceiveFlowWindow connectionWindow,
        int chunkSize = StreamChunkBuffer.DefaultChunkSize, int maxFragments = 4096, ConnectionBufferBudget? budget = null)
    {
        StreamId = streamId;
        _window = new ReceiveFlowWindow(initialWindow, maxWindow);
        _connectionWindow = connectionWindow ?? throw new ArgumentNullException(nameof(connectionWindow));
        _buffer = new ReceiveBuffer(initialWindow, chunkSize, maxFragments, budget);
    }

    public long StreamId { get; private set; }

    /// <summary>As new, for a recycled stream of this connection (see <see cref="StreamTable"/>'s pool).</summary>
    public void Reuse(long streamId, long initialWindow, long maxWindow)
    {
        StreamId = streamId;
        State = ReceiveStreamState.Recv;
        ResetErrorCode = 0;
        StopSendingErrorCode = 0;
        _stopSendingPending = false;
        _stopSendingRequested = false;
        _heldCredit = 0;
        _window.Reuse(initialWindow, maxWindow);
        _buffer.Reuse(initialWindow);
    }

    public ReceiveStreamState State { get; private set; }

    public ReceiveBuffer Buffer => _buffer;

    public ReceiveFlowWindow Window => _window;

    /// <summary>Application error code from the peer's RESET_STREAM (valid in ResetRecvd / ResetRead).</summary>
    public ulong ResetErrorCode { get; private set; }

    /// <summary>Application error code of our STOP_SENDING.</summary>
    public ulong StopSendingErrorCode { get; private set; }

    /// <summary>
    /// Bytes read out of the buffer (<see cref="Read(Span{byte}, out bool, out bool, bool)"/> with holdCredit) whose
    /// flow-control credit is not yet returned: the API layer buffers them until the application consumes them, and
    /// the peer gets no credit for them before that (<see cref="ReleaseCredit"/>).
    /// </summary>
    public long HeldCredit => _heldCredit;

    /// <summary>Data Read or Reset Read: the application has seen the end. RFC 9000 §3.2.</summary>
    public bool IsTerminal => State is ReceiveStreamState.DataRead or ReceiveStreamState.ResetRead;

    /// <summary>Whether <see cref="Read(Span{byte}, out bool, out bool)"/> has something to report (bytes, FIN or reset).</summary>
    public bool IsReadable => _buffer.ReadableBytes > 0 || State is ReceiveStreamState.DataRecvd or ReceiveStreamState.ResetRecvd;

    /// <summary>
    /// A STREAM frame (RFC 9000 §19.8). Checks final size (§4.5) and both flow-control limits (§4.1) before storing.
    /// Recv → Size Known on FIN; → Data Recvd once everything up to the final size arrived. In reset states data is
    /// still checked against the final size, then dropped.
    /// </summary>
    public TransportErrorCode OnStreamFrame(long offset, ReadOnlySpan<byte> data, bool fin, out string? reason)
    {
        TransportErrorCode error = _buffer.Check(offset, data.Length, fin, out reason);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        long end = offset + data.Length;
        long delta = Math.Max(0, end - _window.Received);
        if (!_connectionWindow.CanReceive(_connectionWindow.Received + delta))
        {
            reason = "connection data beyond MAX_DATA";
            return TransportErrorCode.FlowControlError;
        }

        long consumedBefore = _buffer.ReadOffset;
        error = _buffer.Insert(offset, data, fin, out reason);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        _window.OnReceived(end);
        _connectionWindow.OnReceivedDelta(delta);
        ReleaseConsumed(consumedBefore);

        if (State == ReceiveStreamState.Recv && _buffer.IsFinalSizeKnown)
        {
            State = ReceiveStreamState.SizeKnown;
        }

        if (State == ReceiveStreamState.SizeKnown && _buffer.IsAllDataReceived)
        {
            State = ReceiveStreamState.DataRecvd;
        }

        CompleteIfAbandoned();
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// RESET_STREAM (RFC 9000 §19.4). The final size must agree with what is known (§4.5) and respect flow control;
    /// the connection window is charged up to the final size and all unread bytes are released. Recv / Size Known →
    /// Reset Recvd. In Data Recvd all data is already here and is still delivered; later states ignore it.
    /// </summary>
    public TransportErrorCode OnResetStream(ulong applicationErrorCode, long finalSize, out string? reason)
    {
        TransportErrorCode error = _buffer.Check(finalSize, 0, fin: true, out reason);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        long delta = Math.Max(0, finalSize - _window.Received);
        if (!_connectionWindow.CanReceive(_connectionWindow.Received + delta))
        {
            reason = "reset final size beyond MAX_DATA";
            return TransportErrorCode.FlowControlError;
        }

        if (State is not (ReceiveStreamState.Recv or ReceiveStreamState.SizeKnown))
        {
            return TransportErrorCode.NoError;
        }

        long consumedBefore = _buffer.ReadOffset;
        _window.OnReceived(finalSize);
        _connectionWindow.OnReceivedDelta(delta);
        _buffer.ResetTo(finalSize);
        ReleaseCredit(_heldCredit); // the application will not read what it had buffered either
        ReleaseConsumed(consumedBefore);
        ResetErrorCode = applicationErrorCode;
        _stopSendingPending = false;
        State = ReceiveStreamState.ResetRecvd;
        CompleteIfAbandoned();
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// Application read of contiguous data. <paramref name="fin"/> is set once everything up to the final size was
    /// read (Data Recvd → Data Read). After a reset it returns 0, sets <paramref name="reset"/> and moves Reset Recvd →
    /// Reset Read (the application has been told). RFC 9000 §3.2.
    /// </summary>
    public int Read(Span<byte> destination, out bool fin, out bool reset) => Read(destination, out fin, out reset, holdCredit: false);

    /// <summary>
    /// As <see cref="Read(Span{byte}, out bool, out bool)"/>; with <paramref name="holdCredit"/> the bytes read keep
    /// their flow-control credit until <see cref="ReleaseCredit"/> (they were only moved to the application's buffer).
    /// </summary>
    public int Read(Span<byte> destination, out bool fin, out bool reset, bool holdCredit)
    {
        reset = State is ReceiveStreamState.ResetRecvd or ReceiveStreamState.ResetRead;
        fin = false;
        if (reset)
        {
            State = ReceiveStreamState.ResetRead;
            return 0;
        }

        long before = _buffer.ReadOffset;
        int n = _buffer.Read(destination);
        if (holdCredit)
        {
            _heldCredit += _buffer.ReadOffset - before;
        }
        else
        {
            ReleaseConsumed(before);
        }

        fin = OnReadMoved();
        return n;
    }

    /// <summary>After a read or a taken chunk: true once everything up to the final size was read (Data Read, RFC 9000 §3.2).</summary>
    private bool OnReadMoved()
    {
        if (!_buffer.IsFinished || _buffer.IsDiscarding)
        {
            return false;
        }

        if (State == ReceiveStreamState.DataRecvd)
        {
            State = ReceiveStreamState.DataRead;
        }

        return true;
    }

    /// <summary>
    /// As <see cref="Read(Span{byte}, out bool, out bool, bool)"/> with held credit, for a whole chunk taken without
    /// copying (<see cref="ReceiveBuffer.TryTakeChunk"/>): false when none can be taken (or the stream was reset).
    /// </summary>
    public bool TryTakeChunk(out byte[]? chunk, out int start, out int length, out bool fin)
    {
        fin = false;
        chunk = null;
        start = length = 0;
        if (State is ReceiveStreamState.ResetRecvd or ReceiveStreamState.ResetRead || !_buffer.TryTakeChunk(out chunk, out start, out length))
        {
            return false;
        }

        _heldCredit += length;
        fin = OnReadMoved();
        return true;
    }

    /// <summary>
    /// Application abandons reading (RFC 9000 §3.5): buffered and future data are discarded (their credit released)
    /// and STOP_SENDING is queued while the peer may still be sending (Recv / Size Known).
    /// </summary>
    public void StopSending(ulong applicationErrorCode)
    {
        ReleaseCredit(_heldCredit); // what the application buffered is abandoned too
        if (_stopSendingRequested || IsTerminal || State == ReceiveStreamState.ResetRecvd)
        {
            return;
        }

        _stopSendingRequested = true;
        StopSendingErrorCode = applicationErrorCode;
        _stopSendingPending = State is ReceiveStreamState.Recv or ReceiveStreamState.SizeKnown;
        long before = _buffer.ReadOffset;
        _buffer.Discard();
        ReleaseConsumed(before);
        CompleteIfAbandoned();
    }

    /// <summary>Whether the stream was abandoned by <see cref="StopSending"/>.</summary>
    public bool IsStopSendingRequested => _stopSendingRequested;

    public bool NeedsStopSendingFrame => _stopSendingPending && State is ReceiveStreamState.Recv or ReceiveStreamState.SizeKnown;

    public void OnStopSendingFrameSent() => _stopSendingPending = false;

    public void OnStopSendingFrameLost()
    {
        if (_stopSendingRequested && State is ReceiveStreamState.Recv or ReceiveStreamState.SizeKnown)
        {
            _stopSendingPending = true;
        }
    }

    /// <summary>
    /// MAX_STREAM_DATA due: only while the final size is unknown (RFC 9000 §3.2: no credit needed in Size Known), and
    /// either half the window was consumed or a lost update must be repeated.
    /// </summary>
    public bool NeedsMaxStreamData
        => State == ReceiveStreamState.Recv && !_stopSendingRequested && _window.NeedsUpdate;

    /// <summary>
    /// Computes the new limit to advertise (auto-tuning the window, and growing the connection window to 1.5 times a
    /// grown stream window like quic-go) and lets the buffer accept data up to it.
    /// </summary>
    public long CommitMaxStreamData(long nowUs, long smoothedRttUs)
    {
        long windowBefore = _window.Window;
        long max = _window.CommitUpdate(nowUs, smoothedRttUs);
        if (_window.Window > windowBefore)
        {
            _connectionWindow.EnsureMinimumWindow(_window.Window + _window.Window / 2);
        }

        _buffer.RaiseLimit(max);
        return max;
    }

    /// <summary>A MAX_STREAM_DATA frame was lost: repeat the current limit if it still matters.</summary>
    public void OnMaxStreamDataLost(long limit)
    {
        if (State == ReceiveStreamState.Recv)
        {
            _window.OnUpdateLost(limit);
        }
    }

    /// <summary>Peer's STREAM_DATA_BLOCKED: a hint only; repeat our current limit in case the update was lost.</summary>
    public void OnStreamDataBlocked(long limit)
    {
        if (State == ReceiveStreamState.Recv)
        {
            _window.OnPeerBlocked(limit);
        }
    }

    /// <summary>Anything for this stream's receiving part to put in a packet (MAX_STREAM_DATA, STOP_SENDING).</summary>
    public bool WantsToSend => NeedsMaxStreamData || NeedsStopSendingFrame;

    // After STOP_SENDING the application no longer reads, so the terminal states the application would reach by
    // reading (Data Read, Reset Read; RFC 9000 §3.2) are entered as soon as the transport gets there.
    private void CompleteIfAbandoned()
    {
        if (!_stopSendingRequested)
        {
            return;
        }

        if (State == ReceiveStreamState.DataRecvd)
        {
            State = ReceiveStreamState.DataRead;
        }
        else if (State == ReceiveStreamState.ResetRecvd)
        {
            State = ReceiveStreamState.ResetRead;
        }
    }

    /// <summary>
    /// The application consumed <paramref name="bytes"/> of the held bytes: their credit goes back to both windows (at
    /// most what is held: after a reset or STOP_SENDING everything held was already released).
    /// </summary>
    public void ReleaseCredit(long bytes)
    {
        bytes = Math.Min(bytes, _heldCredit);
        if (bytes <= 0)
        {
            return;
        }

        _heldCredit -= bytes;
        _window.OnConsumed(bytes);
        _connectionWindow.OnConsumed(bytes);
    }

    private void ReleaseConsumed(long readOffsetBefore)
    {
        long released = _buffer.ReadOffset - readOffsetBefore;
        if (released > 0)
        {
            _window.OnConsumed(released);
            _connectionWindow.OnConsumed(released);
        }
    }
}
