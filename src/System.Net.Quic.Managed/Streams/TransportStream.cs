namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// One stream of a connection: the sending part (absent on a peer's unidirectional stream) and the receiving part
/// (absent on our unidirectional stream). RFC 9000 §2, §3.
/// </summary>
internal sealed class TransportStream
{
    public TransportStream(long id, bool isLocal, SendStream? send, ReceiveStream? receive)
    {
        Id = id;
        IsLocal = isLocal;
        Send = send;
        Receive = receive;
    }

    public long Id { get; private set; }

    /// <summary>Opened by this endpoint.</summary>
    public bool IsLocal { get; private set; }

    public bool IsUnidirectional => StreamId.IsUnidirectional(Id);

    public SendStream? Send { get; }

    public ReceiveStream? Receive { get; }

    /// <summary>
    /// Both parts reached a terminal state (RFC 9000 §3.3 Data Recvd/Reset Recvd and Data Read/Reset Read) and the
    /// application consumed what it had buffered (its connection credit is returned): the stream can be released.
    /// </summary>
    public bool IsClosed => (Send is null || Send.IsTerminal) && (Receive is null || (Receive.IsTerminal && Receive.HeldCredit == 0));

    /// <summary>Some frame for this stream is waiting to be sent (data, RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA, STREAM_DATA_BLOCKED).</summary>
    public bool WantsToSend => (Send is not null && Send.WantsToSend) || (Receive is not null && Receive.WantsToSend);

    /// <summary>Removed from its table; ignore it.</summary>
    public bool IsReleased { get; internal set; }

    /// <summary>In its table's queue of peer streams not yet accepted.</summary>
    internal bool InIncomingQueue;

    /// <summary>
    /// Released and in no queue of its table: nothing refers to it any more, so the table may give it (and its parts)
    /// to its next stream.
    /// </summary>
    internal bool CanBeRecycled => IsReleased && !InSendQueue && !InUrgentQueue && !IsDeferred && !InIncomingQueue;

    /// <summary>A recycled stream becomes stream <paramref name="id"/> (its parts were reset by the table).</summary>
    internal void Reuse(long id, bool isLocal)
    {
        Id = id;
        IsLocal = isLocal;
        IsReleased = false;
        Urgency = StreamTable.DefaultUrgency;
        Incremental = StreamTable.DefaultIncremental;
    }

    /// <summary>
    /// RFC 9218-model urgency, 0 (most urgent) to 7; local only (never signalled). Changed through
    /// <see cref="StreamTable.SetPriority"/> so a queued stream moves to its new level.
    /// </summary>
    public int Urgency
    {
        get => _urgency;
        internal set => _urgency = (byte)value;
    }

    // A byte (0..7 fits): it packs with the flags, a smaller object per stream.
    private byte _urgency = StreamTable.DefaultUrgency;

    /// <summary>Incremental streams of one urgency share the pipe round-robin; non-incremental ones go one at a time in id order.</summary>
    public bool Incremental { get; internal set; } = StreamTable.DefaultIncremental;

    // Intrusive scheduler links, owned by StreamTable: the priority level's list (doubly linked so a priority change can
    // unlink a stream from the middle), the control/retransmission lane, and the per-packet deferral chain.
    internal TransportStream? NextInSendQueue;
    internal TransportStream? PrevInSendQueue;
    internal bool InSendQueue;
    internal TransportStream? NextInUrgentQueue;
    internal bool InUrgentQueue;
    internal TransportStream? NextDeferred;
    internal bool IsDeferred;
}
