namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// The sending part of a stream: its <see cref="SendBuffer"/>, stream-level credit, a shared connection-level credit,
/// and the state machine of RFC 9000 §3.1. The connection core asks it for STREAM, RESET_STREAM and
/// STREAM_DATA_BLOCKED content and reports their fate (acked / lost).
/// </summary>
internal sealed class SendStream
{
    private readonly SendBuffer _buffer;
    private readonly SendFlowCredit _credit;
    private readonly SendFlowCredit _connectionCredit;
    private bool _resetFramePending;
    private bool _stopSendingReceived;
    private ulong _stopSendingCode;

    public SendStream(long streamId, long peerMaxStreamData, SendFlowCredit connectionCredit, long maxBufferedBytes,
        int chunkSize = StreamChunkBuffer.DefaultChunkSize, ConnectionBufferBudget? budget = null)
    {
        StreamId = streamId;
        _credit = new SendFlowCredit(peerMaxStreamData);
        _connectionCredit = connectionCredit ?? throw new ArgumentNullException(nameof(connectionCredit));
        _buffer = new SendBuffer(maxBufferedBytes, chunkSize, budget: budget);
    }

    public long StreamId { get; private set; }

    /// <summary>As new, for a recycled stream of this connection (see <see cref="StreamTable"/>'s pool).</summary>
    public void Reuse(long streamId, long peerMaxStreamData, long maxBufferedBytes)
    {
        StreamId = streamId;
        State = SendStreamState.Ready;
        ResetErrorCode = 0;
        _stopSendingReceived = false;
        _stopSendingCode = 0;
        _resetFramePending = false;
        _credit.Reuse(peerMaxStreamData);
        _buffer.Reuse(maxBufferedBytes);
    }

    public SendStreamState State { get; private set; }

    public SendBuffer Buffer => _buffer;

    public SendFlowCredit Credit => _credit;

    /// <summary>Application error code of the RESET_STREAM we send (valid in ResetSent/ResetRecvd).</summary>
    public ulong ResetErrorCode { get; private set; }

    /// <summary>
    /// Final size carried in our RESET_STREAM: the credit consumed. RFC 9000 §4.5, §19.4. (Nothing is sent after the
    /// reset, so the highest offset sent stays what it was then.)
    /// </summary>
    public long ResetFinalSize => State is SendStreamState.ResetSent or SendStreamState.ResetRecvd ? _buffer.MaxSentOffset : 0;

    /// <summary>Application error code from the peer's STOP_SENDING, or null.</summary>
    public ulong? StopSendingErrorCode => _stopSendingReceived ? _stopSendingCode : null;

    /// <summary>Data Recvd or Reset Recvd: nothing more will ever be sent. RFC 9000 §3.1.</summary>
    public bool IsTerminal => State is SendStreamState.DataRecvd or SendStreamState.ResetRecvd;

    /// <summary>Bytes the application may append now.</summary>
    public long WritableBytes => State is SendStreamState.Ready or SendStreamState.Send ? _buffer.WritableBytes : 0;

    /// <summary>
    /// Application write: copies what fits under the buffer bound, returns the count; FIN applies only if all was taken.
    /// </summary>
    public int Write(ReadOnlySpan<byte> data, bool fin)
    {
        if (State is not (SendStreamState.Ready or SendStreamState.Send))
        {
            throw new InvalidOperationException("stream is not writable in state " + State.ToString());
        }

        return _buffer.Append(data, fin);
    }

    /// <summary>
    /// Application abort: send RESET_STREAM. From Ready, Send or Data Sent to Reset Sent (RFC 9000 §3.1); otherwise
    /// nothing happens. Returns true if the stream was reset by this call.
    /// </summary>
    public bool Reset(ulong applicationErrorCode)
    {
        if (State is not (SendStreamState.Ready or SendStreamState.Send or SendStreamState.DataSent))
        {
            return false;
        }

        ResetErrorCode = applicationErrorCode;
        _buffer.Reset();
        _resetFramePending = true;
        State = SendStreamState.ResetSent;
        return true;
    }

    /// <summary>
    /// Peer's STOP_SENDING (RFC 9000 §3.5): an endpoint MUST answer with RESET_STREAM in Ready or Send, and we also do
    /// so in Data Sent (allowed); the error code may be the peer's. Returns true if a reset was started.
    /// </summary>
    public bool OnStopSending(ulong applicationErrorCode)
    {
        if (!_stopSendingReceived)
        {
            _stopSendingReceived = true;
            _stopSendingCode = applicationErrorCode;
        }

        if (State == SendStreamState.DataSent && _buffer.IsAllDataAcked)
        {
            return false;
        }

        return Reset(applicationErrorCode);
    }

    /// <summary>Peer's MAX_STREAM_DATA. Returns true if credit grew (the stream may have become sendable).</summary>
    public bool OnMaxStreamData(long maxStreamData) => _credit.OnMaxDataReceived(maxStreamData);

    /// <summary>The absolute offset new data may reach: min of stream credit and connection credit.</summary>
    public long FlowLimitOffset => Math.Min(_credit.MaxData, _buffer.MaxSentOffset + Math.Max(0, _connectionCredit.Available));

    /// <summary>
    /// Whether a STREAM frame can be produced now: retransmission, a FIN, or new data within stream credit. Connection
    /// credit is not considered (the core checks <see cref="SendFlowCredit.Available"/> once per packet).
    /// </summary>
    public bool HasStreamDataToSend
    {
        get
        {
            if (State is not (SendStreamState.Ready or SendStreamState.Send or SendStreamState.DataSent))
            {
                return false;
            }

            if (_buffer.HasRetransmission)
            {
                return true;
            }

            if (_buffer.MaxSentOffset < _buffer.WriteOffset)
            {
                return _credit.Available > 0;
            }

            return _buffer.IsFinRequested && !_buffer.IsFinSent;
        }
    }

    /// <summary>
    /// New data within stream credit, or a FIN not sent yet: what the priority scheduler orders (retransmissions and
    /// control frames take the urgent lane instead). Connection credit is not considered.
    /// </summary>
    public bool HasNewStreamData
    {
        get
        {
            if (State is not (SendStreamState.Ready or SendStreamState.Send))
            {
                return false;
            }

            if (_buffer.MaxSentOffset < _buffer.WriteOffset)
            {
                return _credit.Available > 0;
            }

            return _buffer.IsFinRequested && !_buffer.IsFinSent;
        }
    }

    /// <summary>Lost data or a lost FIN waits for retransmission (RFC 9000 §13.3).</summary>
    public bool HasRetransmission => State is SendStreamState.Send or SendStreamState.DataSent && _buffer.HasRetransmission;

    /// <summary>Anything for this stream's sending part to put in a packet (data, RESET_STREAM, STREAM_DATA_BLOCKED).</summary>
    public bool WantsToSend => HasStreamDataToSend || _resetFramePending || NeedsStreamDataBlocked;

    /// <summary>The next STREAM frame content, without consuming it (to size the frame header).</summary>
    public bool TryPeekNextToSend(out long offset, out long length, out bool fin)
    {
        if (State is not (SendStreamState.Ready or SendStreamState.Send or SendStreamState.DataSent))
        {
            offset = 0;
            length = 0;
            fin = false;
            return false;
        }

        return _buffer.TryPeekNextToSend(FlowLimitOffset, out offset, out length, out fin);
    }

    /// <summary>
    /// Copies the next STREAM frame payload into <paramref name="destination"/> and records it as sent, charging new
    /// bytes to both flow-control credits. Ready → Send; FIN sent → Data Sent. RFC 9000 §3.1.
    /// </summary>
    public bool TryTakeNextToSend(Span<byte> destination, out long offset, out int length, out bool fin)
    {
        if (State is not (SendStreamState.Ready or SendStreamState.Send or SendStreamState.DataSent))
        {
            offset = 0;
            length = 0;
            fin = false;
            return false;
        }

        long before = _buffer.MaxSentOffset;
        if (!_buffer.TryTakeNextToSend(destination, FlowLimitOffset, out offset, out length, out fin))
        {
            return false;
        }

        long newBytes = _buffer.MaxSentOffset - before;
        _credit.AddSent(newBytes);
        _connectionCredit.AddSent(newBytes);
        if (State == SendStreamState.Ready)
        {
            State = SendStreamState.Send;
        }

        if (fin && State == SendStreamState.Send)
        {
            State = SendStreamState.DataSent;
        }

        return true;
    }

    /// <summary>A STREAM frame we sent was acknowledged; all data and FIN acknowledged → Data Recvd.</summary>
    public void OnStreamFrameAcked(long offset, long length, bool fin)
    {
        _buffer.OnAcked(offset, length, fin);
        if (State == SendStreamState.DataSent && _buffer.IsAllDataAcked)
        {
            State = SendStreamState.DataRecvd;
        }
    }

    /// <summary>A STREAM frame we sent was declared lost: its unacknowledged bytes are queued again.</summary>
    public void OnStreamFrameLost(long offset, long length, bool fin) => _buffer.OnLost(offset, length, fin);

    /// <summary>A RESET_STREAM frame is due (after <see cref="Reset"/> or STOP_SENDING, or after its loss).</summary>
    public bool NeedsResetFrame => _resetFramePending && State == SendStreamState.ResetSent;

    public void OnResetFrameSent() => _resetFramePending = false;

    /// <summary>RESET_STREAM acknowledged: Reset Sent → Reset Recvd. RFC 9000 §3.1.</summary>
    public void OnResetFrameAcked()
    {
        _resetFramePending = false;
        if (State == SendStreamState.ResetSent)
        {
            State = SendStreamState.ResetRecvd;
        }
    }

    public void OnResetFrameLost()
    {
        if (State == SendStreamState.ResetSent)
        {
            _resetFramePending = true;
        }
    }

    /// <summary>
    /// STREAM_DATA_BLOCKED due: new data waits and the stream credit is exhausted, not yet signalled at this limit.
    /// RFC 9000 §4.1, §19.13.
    /// </summary>
    public bool NeedsStreamDataBlocked
        => State is SendStreamState.Ready or SendStreamState.Send
           && _buffer.MaxSentOffset < _buffer.WriteOffset
           && _credit.NeedsBlockedFrame;

    /// <summary>The limit to put in STREAM_DATA_BLOCKED.</summary>
    public long BlockedLimit => _credit.MaxData;

    /// <summary>Records STREAM_DATA_BLOCKED sent; it also moves Ready → Send (RFC 9000 §3.1).</summary>
    public void OnStreamDataBlockedSent(long limit)
    {
        _credit.OnBlockedFrameSent(limit);
        if (State == SendStreamState.Ready)
        {
            State = SendStreamState.Send;
        }
    }

    public void OnStreamDataBlockedLost(long limit) => _credit.OnBlockedFrameLost(limit);
}
