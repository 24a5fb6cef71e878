using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// All streams of one connection: id → stream, stream-count limits in both directions (RFC 9000 §4.6), connection
/// flow control (§4.1), the per-frame stream-state checks of §19, implicit opening (§3.2), an accept queue of new
/// peer streams, and a round-robin queue of streams with something to send.
/// </summary>
internal sealed class StreamTable
{
    private readonly Dictionary<long, TransportStream> _streams = new();
    private readonly Queue<TransportStream> _incoming = new();
    private readonly StreamTableOptions _options;
    private readonly LocalStreamLimit _localBidi;
    private readonly LocalStreamLimit _localUni;
    private readonly RemoteStreamLimit _remoteBidi;
    private readonly RemoteStreamLimit _remoteUni;
    private TransportStream? _sendHead;
    private TransportStream? _sendTail;
    private long _peerMaxStreamDataBidiLocal;
    private long _peerMaxStreamDataBidiRemote;
    private long _peerMaxStreamDataUni;

    public StreamTable(bool isServer, StreamTableOptions options)
    {
        IsServer = isServer;
        _options = options ?? throw new ArgumentNullException(nameof(options));
        _localBidi = new LocalStreamLimit(isServer, unidirectional: false);
        _localUni = new LocalStreamLimit(isServer, unidirectional: true);
        _remoteBidi = new RemoteStreamLimit(isServer, unidirectional: false, options.MaxStreamsBidi);
        _remoteUni = new RemoteStreamLimit(isServer, unidirectional: true, options.MaxStreamsUni);
        ConnectionReceiveWindow = new ReceiveFlowWindow(options.InitialMaxData, Math.Max(options.InitialMaxData, options.MaxConnectionReceiveWindow));
        ConnectionSendCredit = new SendFlowCredit(0);
    }

    public bool IsServer { get; }

    /// <summary>MAX_DATA we advertise and the data the peer sent on all streams.</summary>
    public ReceiveFlowWindow ConnectionReceiveWindow { get; }

    /// <summary>The peer's MAX_DATA and the new data we sent on all streams.</summary>
    public SendFlowCredit ConnectionSendCredit { get; }

    public LocalStreamLimit LocalBidiLimit => _localBidi;

    public LocalStreamLimit LocalUniLimit => _localUni;

    public RemoteStreamLimit RemoteBidiLimit => _remoteBidi;

    public RemoteStreamLimit RemoteUniLimit => _remoteUni;

    /// <summary>Streams currently held.</summary>
    public int Count => _streams.Count;

    /// <summary>All streams held (struct enumerator, no allocation).</summary>
    public Dictionary<long, TransportStream>.ValueCollection Streams => _streams.Values;

    /// <summary>
    /// Applies the peer's transport parameters (RFC 9000 §18.2). Values only raise limits, so this can also follow 0-RTT
    /// remembered values. A max_streams value above 2^60 is TRANSPORT_PARAMETER_ERROR (§4.6).
    /// </summary>
    public TransportErrorCode ApplyPeerTransportParameters(long initialMaxData, long maxStreamDataBidiLocal,
        long maxStreamDataBidiRemote, long maxStreamDataUni, long maxStreamsBidi, long maxStreamsUni, out string? reason)
    {
        if (maxStreamsBidi > StreamId.MaxStreamCount || maxStreamsUni > StreamId.MaxStreamCount)
        {
            reason = "initial_max_streams above 2^60";
            return TransportErrorCode.TransportParameterError;
        }

        if (initialMaxData < 0 || maxStreamDataBidiLocal < 0 || maxStreamDataBidiRemote < 0 || maxStreamDataUni < 0 || maxStreamsBidi < 0 || maxStreamsUni < 0)
        {
            reason = "negative transport parameter";
            return TransportErrorCode.TransportParameterError;
        }

        ConnectionSendCredit.OnMaxDataReceived(initialMaxData);
        _peerMaxStreamDataBidiLocal = Math.Max(_peerMaxStreamDataBidiLocal, maxStreamDataBidiLocal);
        _peerMaxStreamDataBidiRemote = Math.Max(_peerMaxStreamDataBidiRemote, maxStreamDataBidiRemote);
        _peerMaxStreamDataUni = Math.Max(_peerMaxStreamDataUni, maxStreamDataUni);
        _localBidi.OnMaxStreams(maxStreamsBidi, out _);
        _localUni.OnMaxStreams(maxStreamsUni, out _);
        foreach (TransportStream stream in _streams.Values)
        {
            if (stream.Send is SendStream send && send.OnMaxStreamData(PeerCreditFor(stream.Id)))
            {
                MarkSendable(stream);
            }
        }

        reason = null;
        return TransportErrorCode.NoError;
    }

    /// <summary>Opens our next stream of a type, or false if the peer's MAX_STREAMS is reached (the caller waits; STREAMS_BLOCKED gets armed).</summary>
    public bool TryOpenLocalStream(bool unidirectional, [NotNullWhen(true)] out TransportStream? stream)
    {
        LocalStreamLimit limit = unidirectional ? _localUni : _localBidi;
        if (!limit.TryOpen(out long id))
        {
            stream = null;
            return false;
        }

        stream = Create(id);
        return true;
    }

    public bool TryGetStream(long streamId, [NotNullWhen(true)] out TransportStream? stream)
        => _streams.TryGetValue(streamId, out stream);

    /// <summary>
    /// Finds the stream a peer frame refers to, applying RFC 9000 §19: STREAM, RESET_STREAM, STREAM_DATA_BLOCKED for
    /// a send-only stream, and MAX_STREAM_DATA, STOP_SENDING for a receive-only stream are STREAM_STATE_ERROR; any
    /// frame for a locally-initiated stream not yet opened is STREAM_STATE_ERROR; a peer stream beyond our limit is
    /// STREAM_LIMIT_ERROR (§4.6); a new peer stream opens it and all lower-numbered streams of its type (§3.2).
    /// NoError with <paramref name="stream"/> null means the stream was already closed and released: ignore the frame.
    /// </summary>
    public TransportErrorCode GetOrOpenForPeerFrame(long streamId, StreamFrameKind kind, out TransportStream? stream, out string? reason)
    {
        stream = null;
        if (!StreamId.IsValid(streamId))
        {
            reason = "stream id out of range";
            return TransportErrorCode.FrameEncodingError;
        }

        bool local = StreamId.IsLocal(streamId, IsServer);
        bool uni = StreamId.IsUnidirectional(streamId);
        if (uni)
        {
            bool receiveKind = kind is StreamFrameKind.Stream or StreamFrameKind.ResetStream or StreamFrameKind.StreamDataBlocked;
            if (local && receiveKind)
            {
                reason = "frame for a send-only stream";
                return TransportErrorCode.StreamStateError;
            }

            if (!local && !receiveKind)
            {
                reason = "frame for a receive-only stream";
                return TransportErrorCode.StreamStateError;
            }
        }

        if (local)
        {
            if (!(uni ? _localUni : _localBidi).IsOpened(streamId))
            {
                reason = "frame for a locally-initiated stream not yet opened";
                return TransportErrorCode.StreamStateError;
            }

            _streams.TryGetValue(streamId, out stream);
            reason = null;
            return TransportErrorCode.NoError;
        }

        RemoteStreamLimit limit = uni ? _remoteUni : _remoteBidi;
        TransportErrorCode error = limit.OnPeerStream(streamId, out long firstNew, out long newCount, out reason);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        // Bounded by the stream limit we advertised (RFC 9000 §21.8 stream commitment): at most Concurrency streams.
        for (long i = 0; i < newCount; i++)
        {
            TransportStream created = Create(StreamId.Make(firstNew + i, !IsServer, uni));
            _incoming.Enqueue(created);
        }

        _streams.TryGetValue(streamId, out stream);
        return TransportErrorCode.NoError;
    }

    /// <summary>Dequeues the next peer-opened stream for the application to accept, in id order.</summary>
    public bool TryAcceptIncomingStream([NotNullWhen(true)] out TransportStream? stream)
    {
        while (_incoming.TryDequeue(out stream))
        {
            if (!stream.IsReleased)
            {
                return true;
            }
        }

        return false;
    }

    public int PendingIncomingCount => _incoming.Count;

    /// <summary>STREAM frame: state checks, then reassembly and flow control. RFC 9000 §19.8.</summary>
    public TransportErrorCode OnStreamFrame(long streamId, long offset, ReadOnlySpan<byte> data, bool fin, out string? reason)
    {
        TransportErrorCode error = GetOrOpenForPeerFrame(streamId, StreamFrameKind.Stream, out TransportStream? stream, out reason);
        if (error != TransportErrorCode.NoError || stream is null)
        {
            return error;
        }

        error = stream.Receive!.OnStreamFrame(offset, data, fin, out reason);
        if (error == TransportErrorCode.NoError)
        {
            AfterReceiveChange(stream);
        }

        return error;
    }

    /// <summary>RESET_STREAM frame. RFC 9000 §19.4.</summary>
    public TransportErrorCode OnResetStreamFrame(long streamId, ulong applicationErrorCode, long finalSize, out string? reason)
    {
        TransportErrorCode error = GetOrOpenForPeerFrame(streamId, StreamFrameKind.ResetStream, out TransportStream? stream, out reason);
        if (error != TransportErrorCode.NoError || stream is null)
        {
            return error;
        }

        error = stream.Receive!.OnResetStream(applicationErrorCode, finalSize, out reason);
        if (error == TransportErrorCode.NoError)
        {
            AfterReceiveChange(stream);
        }

        return error;
    }

    /// <summary>STOP_SENDING frame: the sending part resets with RESET_STREAM. RFC 9000 §3.5, §19.5.</summary>
    public TransportErrorCode OnStopSendingFrame(long streamId, ulong applicationErrorCode, out string? reason)
    {
        TransportErrorCode error = GetOrOpenForPeerFrame(streamId, StreamFrameKind.StopSending, out TransportStream? stream, out reason);
        if (error != TransportErrorCode.NoError || stream is null)
        {
            return error;
        }

        if (stream.Send!.OnStopSending(applicationErrorCode))
        {
            MarkSendable(stream);
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>MAX_STREAM_DATA frame. RFC 9000 §19.10.</summary>
    public TransportErrorCode OnMaxStreamDataFrame(long streamId, long maxStreamData, out string? reason)
    {
        TransportErrorCode error = GetOrOpenForPeerFrame(streamId, StreamFrameKind.MaxStreamData, out TransportStream? stream, out reason);
        if (error != TransportErrorCode.NoError || stream is null)
        {
            return error;
        }

        if (stream.Send!.OnMaxStreamData(maxStreamData) && stream.Send.WantsToSend)
        {
            MarkSendable(stream);
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>STREAM_DATA_BLOCKED frame. RFC 9000 §19.13.</summary>
    public TransportErrorCode OnStreamDataBlockedFrame(long streamId, long limit, out string? reason)
    {
        TransportErrorCode error = GetOrOpenForPeerFrame(streamId, StreamFrameKind.StreamDataBlocked, out TransportStream? stream, out reason);
        if (error != TransportErrorCode.NoError || stream is null)
        {
            return error;
        }

        stream.Receive!.OnStreamDataBlocked(limit);
        AfterReceiveChange(stream);
        return TransportErrorCode.NoError;
    }

    /// <summary>MAX_STREAMS frame. RFC 9000 §19.11. Returns FRAME_ENCODING_ERROR above 2^60.</summary>
    public TransportErrorCode OnMaxStreamsFrame(bool unidirectional, long maxStreams, out string? reason)
        => (unidirectional ? _localUni : _localBidi).OnMaxStreams(maxStreams, out reason);

    /// <summary>STREAMS_BLOCKED frame. RFC 9000 §19.14.</summary>
    public TransportErrorCode OnStreamsBlockedFrame(bool unidirectional, long limit, out string? reason)
        => (unidirectional ? _remoteUni : _remoteBidi).OnStreamsBlocked(limit, out reason);

    /// <summary>MAX_DATA frame. RFC 9000 §19.9. Returns true if credit grew.</summary>
    public bool OnMaxDataFrame(long maxData) => ConnectionSendCredit.OnMaxDataReceived(maxData);

    /// <summary>MAX_DATA due (half the connection window consumed, or a lost / solicited update to repeat).</summary>
    public bool NeedsMaxData => ConnectionReceiveWindow.NeedsUpdate;

    /// <summary>A MAX_DATA frame carrying <paramref name="maxData"/> was lost.</summary>
    public void OnMaxDataLost(long maxData) => ConnectionReceiveWindow.OnUpdateLost(maxData);

    /// <summary>Peer's DATA_BLOCKED (RFC 9000 §19.12): repeat MAX_DATA if the peer is blocked at our current limit.</summary>
    public void OnDataBlockedFrame(long limit) => ConnectionReceiveWindow.OnPeerBlocked(limit);

    /// <summary>New MAX_DATA value to send (auto-tunes the connection window).</summary>
    public long CommitMaxData(long nowUs, long smoothedRttUs) => ConnectionReceiveWindow.CommitUpdate(nowUs, smoothedRttUs);

    /// <summary>Puts a stream at the tail of the round-robin send queue (no-op if queued or released).</summary>
    public void MarkSendable(TransportStream stream)
    {
        if (stream.InSendQueue || stream.IsReleased)
        {
            return;
        }

        stream.InSendQueue = true;
        stream.NextInSendQueue = null;
        SendableCount++;
        if (_sendTail is null)
        {
            _sendHead = stream;
        }
        else
        {
            _sendTail.NextInSendQueue = stream;
        }

        _sendTail = stream;
    }

    /// <summary>
    /// Takes the stream at the head of the send queue. Fairness: the caller writes one frame's worth for it and calls
    /// <see cref="MarkSendable"/> again if <see cref="TransportStream.WantsToSend"/> still holds, so it goes to the tail.
    /// </summary>
    public bool TryDequeueSendable([NotNullWhen(true)] out TransportStream? stream)
    {
        while (_sendHead is not null)
        {
            stream = _sendHead;
            _sendHead = stream.NextInSendQueue;
            if (_sendHead is null)
            {
                _sendTail = null;
            }

            stream.NextInSendQueue = null;
            stream.InSendQueue = false;
            SendableCount--;
            if (!stream.IsReleased)
            {
                return true;
            }
        }

        stream = null;
        return false;
    }

    /// <summary>
    /// Queues the stream if it now wants to send; call after application writes, reads (MAX_STREAM_DATA may be due),
    /// resets and STOP_SENDING requests. Returns whether it is queued.
    /// </summary>
    public bool RefreshSendable(TransportStream stream)
    {
        if (stream.WantsToSend)
        {
            MarkSendable(stream);
        }

        return stream.InSendQueue;
    }

    public bool HasSendableStreams => _sendHead is not null;

    /// <summary>True when one of our bidirectional streams (a request, in HTTP terms) has something queued to send.</summary>
    public bool HasSendableLocalBidirectionalStream
    {
        get
        {
            for (TransportStream? s = _sendHead; s is not null; s = s.NextInSendQueue)
            {
                if (s.IsLocal && !s.IsUnidirectional) return true;
            }
            return false;
        }
    }

    /// <summary>
    /// Streams queued. A packet builder visits at most this many (snapshot before the loop): a stream that only waits
    /// for connection credit stays queued and would otherwise be visited forever.
    /// </summary>
    public int SendableCount { get; private set; }

    /// <summary>
    /// Releases a closed stream (both parts terminal, RFC 9000 §3.3): removes it and, for a peer stream, returns its
    /// credit so MAX_STREAMS can be sent (§4.6). Returns true if released.
    /// </summary>
    public bool TryRelease(TransportStream stream)
    {
        if (stream.IsReleased || !stream.IsClosed)
        {
            return false;
        }

        stream.IsReleased = true;
        _streams.Remove(stream.Id);
        if (!stream.IsLocal)
        {
            (stream.IsUnidirectional ? _remoteUni : _remoteBidi).OnStreamClosed();
        }

        return true;
    }

    private void AfterReceiveChange(TransportStream stream)
    {
        if (stream.Receive!.WantsToSend)
        {
            MarkSendable(stream);
        }
    }

    private TransportStream Create(long id)
    {
        bool local = StreamId.IsLocal(id, IsServer);
        SendStream? send = StreamId.CanSend(id, IsServer)
            ? new SendStream(id, PeerCreditFor(id), ConnectionSendCredit, _options.MaxSendBufferPerStream, _options.ChunkSize)
            : null;
        ReceiveStream? receive = StreamId.CanReceive(id, IsServer)
            ? new ReceiveStream(id, LocalWindowFor(id), Math.Max(LocalWindowFor(id), _options.MaxStreamReceiveWindow), ConnectionReceiveWindow, _options.ChunkSize, _options.MaxFragmentsPerStream)
            : null;
        var stream = new TransportStream(id, local, send, receive);
        _streams.Add(id, stream);
        return stream;
    }

    // RFC 9000 §18.2: the peer's bidi_local applies to streams the peer opens, bidi_remote to streams we open.
    private long PeerCreditFor(long id)
        => StreamId.IsUnidirectional(id) ? _peerMaxStreamDataUni
            : StreamId.IsLocal(id, IsServer) ? _peerMaxStreamDataBidiRemote : _peerMaxStreamDataBidiLocal;

    private long LocalWindowFor(long id)
        => StreamId.IsUnidirectional(id) ? _options.InitialMaxStreamDataUni
            : StreamId.IsLocal(id, IsServer) ? _options.InitialMaxStreamDataBidiLocal : _options.InitialMaxStreamDataBidiRemote;
}
