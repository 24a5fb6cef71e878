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

    public long Id { get; }

    /// <summary>Opened by this endpoint.</summary>
    public bool IsLocal { get; }

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

    // Intrusive round-robin send queue links, owned by StreamTable.
    internal TransportStream? NextInSendQueue;
    internal bool InSendQueue;
}
