namespace System.Net.Quic.Managed.Core;

/// <summary>
/// One retransmission-relevant frame of a sent packet, as a value (see <see cref="SentFrameKind"/>). Made only through
/// the named constructors, read through the named properties: the positional fields are storage shared by the kinds
/// (<see cref="Value"/> is an offset, a maximum, a limit, a sequence number or a largest acknowledged, depending on
/// the kind).
/// </summary>
internal readonly record struct SentFrame(SentFrameKind Kind, long Id, long Value, int Length, bool Flag)
{
    /// <summary>STREAM data [offset, offset+length) of a stream, with FIN.</summary>
    public static SentFrame Stream(long streamId, long offset, int length, bool fin) => new(SentFrameKind.Stream, streamId, offset, length, fin);

    /// <summary>CRYPTO data [offset, offset+length) of the packet's own space.</summary>
    public static SentFrame Crypto(long offset, int length) => new(SentFrameKind.Crypto, 0, offset, length, false);

    /// <summary>An ACK frame whose largest acknowledged packet number is <paramref name="largestAcknowledged"/>.</summary>
    public static SentFrame Ack(long largestAcknowledged) => new(SentFrameKind.Ack, 0, largestAcknowledged, 0, false);

    /// <summary>RESET_STREAM for a stream (its values are the stream's, resent as they are).</summary>
    public static SentFrame ResetStream(long streamId) => new(SentFrameKind.ResetStream, streamId, 0, 0, false);

    /// <summary>STOP_SENDING for a stream.</summary>
    public static SentFrame StopSending(long streamId) => new(SentFrameKind.StopSending, streamId, 0, 0, false);

    /// <summary>MAX_DATA with <paramref name="maximum"/>.</summary>
    public static SentFrame MaxData(long maximum) => new(SentFrameKind.MaxData, 0, maximum, 0, false);

    /// <summary>MAX_STREAM_DATA of a stream with <paramref name="maximum"/>.</summary>
    public static SentFrame MaxStreamData(long streamId, long maximum) => new(SentFrameKind.MaxStreamData, streamId, maximum, 0, false);

    /// <summary>MAX_STREAMS (bidirectional or unidirectional) with <paramref name="maximum"/>.</summary>
    public static SentFrame MaxStreams(long maximum, bool bidirectional) => new(SentFrameKind.MaxStreams, 0, maximum, 0, bidirectional);

    /// <summary>DATA_BLOCKED at <paramref name="limit"/>.</summary>
    public static SentFrame DataBlocked(long limit) => new(SentFrameKind.DataBlocked, 0, limit, 0, false);

    /// <summary>STREAM_DATA_BLOCKED of a stream at <paramref name="limit"/>.</summary>
    public static SentFrame StreamDataBlocked(long streamId, long limit) => new(SentFrameKind.StreamDataBlocked, streamId, limit, 0, false);

    /// <summary>STREAMS_BLOCKED (bidirectional or unidirectional) at <paramref name="limit"/>.</summary>
    public static SentFrame StreamsBlocked(long limit, bool bidirectional) => new(SentFrameKind.StreamsBlocked, 0, limit, 0, bidirectional);

    /// <summary>NEW_CONNECTION_ID with sequence number <paramref name="sequenceNumber"/>.</summary>
    public static SentFrame NewConnectionId(long sequenceNumber) => new(SentFrameKind.NewConnectionId, 0, sequenceNumber, 0, false);

    /// <summary>RETIRE_CONNECTION_ID with sequence number <paramref name="sequenceNumber"/>.</summary>
    public static SentFrame RetireConnectionId(long sequenceNumber) => new(SentFrameKind.RetireConnectionId, 0, sequenceNumber, 0, false);

    /// <summary>HANDSHAKE_DONE.</summary>
    public static SentFrame HandshakeDone() => new(SentFrameKind.HandshakeDone, 0, 0, 0, false);

    /// <summary>NEW_TOKEN (the token in flight is kept by the connection).</summary>
    public static SentFrame NewToken() => new(SentFrameKind.NewToken, 0, 0, 0, false);

    /// <summary>PATH_CHALLENGE.</summary>
    public static SentFrame PathChallenge() => new(SentFrameKind.PathChallenge, 0, 0, 0, false);

    /// <summary>PATH_RESPONSE (never retransmitted, RFC 9000 §8.2.2).</summary>
    public static SentFrame PathResponse() => new(SentFrameKind.PathResponse, 0, 0, 0, false);

    /// <summary>PING.</summary>
    public static SentFrame Ping() => new(SentFrameKind.Ping, 0, 0, 0, false);

    /// <summary>DATAGRAM number <paramref name="number"/> of <paramref name="length"/> bytes (RFC 9221): never repeated.</summary>
    public static SentFrame Datagram(long number, int length) => new(SentFrameKind.Datagram, number, 0, length, false);

    /// <summary>Frames written verbatim by a test (<c>Connection.Testing</c>): only ACK-eliciting.</summary>
    public static SentFrame RawForTesting() => new(SentFrameKind.RawForTesting, 0, 0, 0, false);

    /// <summary>The stream of a Stream, ResetStream, StopSending, MaxStreamData or StreamDataBlocked record.</summary>
    public long StreamId => Id;

    /// <summary>The number the connection gave a Datagram record (its send result waits on it).</summary>
    public long DatagramNumber => Id;

    /// <summary>The data offset of a Stream or Crypto record.</summary>
    public long Offset => Value;

    /// <summary>The maximum of a MaxData, MaxStreamData or MaxStreams record, or the limit of a blocked record.</summary>
    public long Maximum => Value;

    /// <summary>The sequence number of a NewConnectionId or RetireConnectionId record.</summary>
    public long SequenceNumber => Value;

    /// <summary>The largest acknowledged packet number of an Ack record.</summary>
    public long LargestAcknowledged => Value;

    /// <summary>FIN of a Stream record.</summary>
    public bool Fin => Flag;

    /// <summary>Bidirectional (true) or unidirectional of a MaxStreams or StreamsBlocked record.</summary>
    public bool Bidirectional => Flag;
}
