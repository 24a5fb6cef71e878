using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// All streams of one connection: id → stream, stream-count limits in both directions (RFC 9000 §4.6), connection
/// flow control (§4.1), the per-frame stream-state checks of §19, implicit opening (§3.2), an accept queue of new
/// peer streams, and the send scheduler: an urgent lane for control frames and retransmissions, then eight RFC 9218
/// urgency levels (see <see cref="MarkSendable"/>).
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
    private readonly TransportStream?[] _sequentialHead = new TransportStream?[UrgencyLevels];
    private readonly TransportStream?[] _sequentialTail = new TransportStream?[UrgencyLevels];
    private readonly TransportStream?[] _incrementalHead = new TransportStream?[UrgencyLevels];
    private readonly TransportStream?[] _incrementalTail = new TransportStream?[UrgencyLevels];
    private int _levelMask;
    private TransportStream? _urgentHead;
    private TransportStream? _urgentTail;
    private TransportStream? _deferred;
    private long _peerMaxStreamDataBidiLocal;
    private long _peerMaxStreamDataBidiRemote;
    private long _peerMaxStreamDataUni;
    // Released bidirectional streams kept for the next ones (their parts, buffers' rings and range sets with them): a
    // request/response connection allocates no stream state per request. A stack of at most RecycledStreams.
    private readonly TransportStream?[] _recycled = new TransportStream?[RecycledStreams];
    private int _recycledCount;

    /// <summary>The most released streams a connection keeps for reuse.</summary>
    public const int RecycledStreams = 16;

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
        BufferBudget = new ConnectionBufferBudget(options.EndpointBudget, options.MinimumSendBudget);
    }

    /// <summary>What the streams buffer: held send bytes against the connection's send budget, and pooled chunks.</summary>
    public ConnectionBufferBudget BufferBudget { get; }

    /// <summary>
    /// Sets <paramref name="send"/>'s bound on bytes held before the application's bytes go in: the fixed per-stream
    /// bound, or twice the path's bandwidth-delay product where that is more (<see cref="ConnectionBufferBudget.StreamPathLimitBytes"/>).
    /// </summary>
    public void ApplySendBufferLimit(SendStream send)
        => send.Buffer.MaxBufferedBytes = Math.Max(_options.MaxSendBufferPerStream, BufferBudget.StreamPathLimitBytes);

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

    /// <summary>
    /// The ID <see cref="TryOpenLocalStream"/> will give the stream of a type opened <paramref name="ahead"/> opens after
    /// the next one (0: the next), or -1 when the peer's current limit leaves no room for it. Callable off the
    /// connection's thread by a caller that serializes it with every <see cref="TryOpenLocalStream"/> under one lock
    /// (the API layer's open lock); the peer's limit read may then be stale, never too high.
    /// </summary>
    public long PeekLocalStreamId(bool unidirectional, long ahead)
    {
        LocalStreamLimit limit = unidirectional ? _localUni : _localBidi;
        long index = limit.OpenedCount + ahead;
        return index < limit.MaxStreams ? StreamId.Make(index, IsServer, unidirectional) : -1;
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
            created.InIncomingQueue = true;
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
            stream.InIncomingQueue = false;
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

    /// <summary>Urgency of a stream nobody prioritised (RFC 9218 §4.1 default).</summary>
    public const int DefaultUrgency = 3;

    /// <summary>
    /// Incremental flag of a stream nobody prioritised. True (unlike RFC 9218's HTTP default): streams of equal priority
    /// share the pipe round-robin, as this stack always did, so an unprioritised small stream never waits behind a bulk one.
    /// </summary>
    public const bool DefaultIncremental = true;

    /// <summary>Number of urgency levels (0..7).</summary>
    public const int UrgencyLevels = 8;

    /// <summary>
    /// Queues a stream that has something to send. The send scheduler (RFC 9218 model) has an urgent lane, served first
    /// in FIFO order, for control frames (RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA, STREAM_DATA_BLOCKED) and
    /// retransmissions of lost data, and one list per urgency level for new data: the lowest level with a stream is
    /// served; within it non-incremental streams one at a time in id order, then incremental ones round-robin.
    /// A stream may be in the urgent lane and its level at once. No-op if released or already queued where it belongs.
    /// </summary>
    public void MarkSendable(TransportStream stream)
    {
        if (stream.IsReleased)
        {
            return;
        }

        if (!stream.InUrgentQueue && NeedsUrgentService(stream))
        {
            stream.InUrgentQueue = true;
            stream.NextInUrgentQueue = null;
            SendableCount++;
            if (_urgentTail is null)
            {
                _urgentHead = stream;
            }
            else
            {
                _urgentTail.NextInUrgentQueue = stream;
            }

            _urgentTail = stream;
        }

        if (!stream.InSendQueue && stream.Send is { } send && send.HasNewStreamData)
        {
            LinkIntoLevel(stream);
        }
    }

    /// <summary>Control frames or lost data to send: served before any priority level so priorities never starve them.</summary>
    private static bool NeedsUrgentService(TransportStream stream)
        => (stream.Receive is { } receive && receive.WantsToSend)
            || (stream.Send is { } send && (send.NeedsResetFrame || send.HasRetransmission || send.NeedsStreamDataBlocked));

    /// <summary>
    /// Takes the next stream to serve: the urgent lane's head (<paramref name="urgentOnly"/>: write only its control
    /// frames and retransmissions), else the head of the most urgent non-empty level. O(1). The caller writes what it
    /// can and then calls <see cref="OnServed"/>; the stream is re-queued by <see cref="EndSendRound"/>, so each queued
    /// entry is visited at most once per packet.
    /// </summary>
    public bool TryDequeueSendable([NotNullWhen(true)] out TransportStream? stream, out bool urgentOnly)
    {
        while (_urgentHead is not null)
        {
            stream = _urgentHead;
            _urgentHead = stream.NextInUrgentQueue;
            if (_urgentHead is null)
            {
                _urgentTail = null;
            }

            stream.NextInUrgentQueue = null;
            stream.InUrgentQueue = false;
            SendableCount--;
            if (!stream.IsReleased)
            {
                urgentOnly = true;
                return true;
            }
        }

        urgentOnly = false;
        while (_levelMask != 0)
        {
            int level = BitOperations.TrailingZeroCount(_levelMask);
            stream = _sequentialHead[level] ?? _incrementalHead[level]!;
            UnlinkFromLevel(stream);
            if (!stream.IsReleased)
            {
                return true;
            }
        }

        stream = null;
        return false;
    }

    /// <summary>As <see cref="TryDequeueSendable(out TransportStream?, out bool)"/>, for callers that serve a stream fully either way.</summary>
    public bool TryDequeueSendable([NotNullWhen(true)] out TransportStream? stream) => TryDequeueSendable(out stream, out _);

    /// <summary>A stream from <see cref="TryDequeueSendable(out TransportStream?, out bool)"/> was served; it is re-queued (if it still wants to send) by <see cref="EndSendRound"/>.</summary>
    public void OnServed(TransportStream stream)
    {
        if (stream.IsDeferred)
        {
            return;
        }

        stream.IsDeferred = true;
        stream.NextDeferred = _deferred;
        _deferred = stream;
    }

    /// <summary>
    /// Re-queues the streams served during one packet. A non-incremental stream returns to its place in id order (the
    /// head: it keeps the level until done); an incremental one goes to its level's tail (round-robin).
    /// </summary>
    public void EndSendRound()
    {
        TransportStream? stream = _deferred;
        if (stream is null)
        {
            return;
        }

        _deferred = null;
        if (stream.NextDeferred is null)
        {
            // One stream served: the bulk-transfer fast path.
            stream.IsDeferred = false;
            MarkSendable(stream);
            return;
        }

        // Served in order A, B, C: the chain is C, B, A. Reverse it so incremental streams keep their rotation order.
        TransportStream? ordered = null;
        while (stream is not null)
        {
            TransportStream? next = stream.NextDeferred;
            stream.NextDeferred = ordered;
            ordered = stream;
            stream = next;
        }

        while (ordered is not null)
        {
            TransportStream? next = ordered.NextDeferred;
            ordered.NextDeferred = null;
            ordered.IsDeferred = false;
            MarkSendable(ordered);
            ordered = next;
        }
    }

    /// <summary>
    /// Sets a stream's priority (urgency 0..7, lower first; incremental or not). A queued stream moves to its new place
    /// at once, so the change applies from the next packet on.
    /// </summary>
    public void SetPriority(TransportStream stream, int urgency, bool incremental)
    {
        if ((uint)urgency >= UrgencyLevels)
        {
            throw new ArgumentOutOfRangeException(nameof(urgency), urgency, "The urgency must be between 0 (most urgent) and 7 (least urgent).");
        }

        if (stream.Urgency == urgency && stream.Incremental == incremental)
        {
            return;
        }

        bool queued = stream.InSendQueue;
        if (queued)
        {
            UnlinkFromLevel(stream);
        }

        stream.Urgency = urgency;
        stream.Incremental = incremental;
        if (queued)
        {
            LinkIntoLevel(stream);
        }
    }

    private void LinkIntoLevel(TransportStream stream)
    {
        int level = stream.Urgency;
        stream.InSendQueue = true;
        SendableCount++;
        _levelMask |= 1 << level;
        TransportStream?[] heads = stream.Incremental ? _incrementalHead : _sequentialHead;
        TransportStream?[] tails = stream.Incremental ? _incrementalTail : _sequentialTail;

        // Incremental: the tail (round-robin). Non-incremental: keep id order; the common cases are O(1): a new
        // (higher-id) stream goes to the tail, the stream being served returns to the head.
        TransportStream? after = tails[level];
        if (!stream.Incremental && after is not null && after.Id > stream.Id)
        {
            TransportStream? head = heads[level];
            if (head!.Id > stream.Id)
            {
                after = null;
            }
            else
            {
                after = head;
                while (after.NextInSendQueue is { } next && next.Id < stream.Id)
                {
                    after = next;
                }
            }
        }

        TransportStream? before = after is null ? heads[level] : after.NextInSendQueue;
        stream.PrevInSendQueue = after;
        stream.NextInSendQueue = before;
        if (after is null)
        {
            heads[level] = stream;
        }
        else
        {
            after.NextInSendQueue = stream;
        }

        if (before is null)
        {
            tails[level] = stream;
        }
        else
        {
            before.PrevInSendQueue = stream;
        }
    }

    private void UnlinkFromLevel(TransportStream stream)
    {
        int level = stream.Urgency;
        TransportStream?[] heads = stream.Incremental ? _incrementalHead : _sequentialHead;
        TransportStream?[] tails = stream.Incremental ? _incrementalTail : _sequentialTail;
        TransportStream? prev = stream.PrevInSendQueue;
        TransportStream? next = stream.NextInSendQueue;
        if (prev is null)
        {
            heads[level] = next;
        }
        else
        {
            prev.NextInSendQueue = next;
        }

        if (next is null)
        {
            tails[level] = prev;
        }
        else
        {
            next.PrevInSendQueue = prev;
        }

        stream.NextInSendQueue = null;
        stream.PrevInSendQueue = null;
        stream.InSendQueue = false;
        SendableCount--;
        if (_sequentialHead[level] is null && _incrementalHead[level] is null)
        {
            _levelMask &= ~(1 << level);
        }
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

        return stream.InSendQueue || stream.InUrgentQueue;
    }

    public bool HasSendableStreams => _levelMask != 0 || _urgentHead is not null;

    /// <summary>True when one of our bidirectional streams (a request, in HTTP terms) has something queued to send.</summary>
    public bool HasSendableLocalBidirectionalStream
    {
        get
        {
            for (TransportStream? s = _urgentHead; s is not null; s = s.NextInUrgentQueue)
            {
                if (s.IsLocal && !s.IsUnidirectional) return true;
            }
            for (int level = 0; level < UrgencyLevels; level++)
            {
                if (HasLocalBidirectional(_sequentialHead[level]) || HasLocalBidirectional(_incrementalHead[level])) return true;
            }
            return false;
        }
    }

    private static bool HasLocalBidirectional(TransportStream? first)
    {
        for (TransportStream? s = first; s is not null; s = s.NextInSendQueue)
        {
            if (s.IsLocal && !s.IsUnidirectional) return true;
        }
        return false;
    }

    /// <summary>
    /// Queue entries (a stream in the urgent lane and a level counts twice). A packet builder visits at most this many
    /// (snapshot before the loop).
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

        if (!stream.IsUnidirectional && stream.CanBeRecycled && _recycledCount < _recycled.Length)
        {
            _recycled[_recycledCount++] = stream;
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
        if (_recycledCount > 0 && !StreamId.IsUnidirectional(id))
        {
            // A released bidirectional stream of this connection, reset to new: no allocation per request stream.
            TransportStream recycled = _recycled[--_recycledCount]!;
            _recycled[_recycledCount] = null;
            recycled.Send!.Reuse(id, PeerCreditFor(id), _options.MaxSendBufferPerStream);
            recycled.Receive!.Reuse(id, LocalWindowFor(id), Math.Max(LocalWindowFor(id), _options.MaxStreamReceiveWindow));
            recycled.Reuse(id, local);
            _streams.Add(id, recycled);
            return recycled;
        }

        SendStream? send = StreamId.CanSend(id, IsServer)
            ? new SendStream(id, PeerCreditFor(id), ConnectionSendCredit, _options.MaxSendBufferPerStream, _options.ChunkSize, BufferBudget)
            : null;
        ReceiveStream? receive = StreamId.CanReceive(id, IsServer)
            ? new ReceiveStream(id, LocalWindowFor(id), Math.Max(LocalWindowFor(id), _options.MaxStreamReceiveWindow), ConnectionReceiveWindow, _options.ChunkSize, _options.MaxFragmentsPerStream, BufferBudget)
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
