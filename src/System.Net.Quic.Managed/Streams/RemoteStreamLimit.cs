using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// How many streams of one type the peer may open: the MAX_STREAMS limit we advertise (RFC 9000 §4.6). A peer
/// stream beyond it is STREAM_LIMIT_ERROR; referencing stream N implicitly opens all lower-numbered streams of the
/// type (§3.2). As peer streams close, the limit is raised to keep <see cref="Concurrency"/> streams available,
/// advertised as each stream's credit is returned.
/// </summary>
internal sealed class RemoteStreamLimit
{
    private bool _forced;

    public RemoteStreamLimit(bool isServer, bool unidirectional, long concurrency)
    {
        if (concurrency < 0 || concurrency > StreamId.MaxStreamCount)
        {
            throw new ArgumentOutOfRangeException(nameof(concurrency));
        }

        IsServer = isServer;
        IsUnidirectional = unidirectional;
        Concurrency = concurrency;
        MaxStreams = concurrency;
    }

    /// <summary>Our role (the peer's streams have the opposite initiator bit).</summary>
    public bool IsServer { get; }

    public bool IsUnidirectional { get; }

    /// <summary>Streams of this type the peer may have open at once.</summary>
    public long Concurrency { get; }

    /// <summary>Cumulative limit advertised to the peer.</summary>
    public long MaxStreams { get; private set; }

    /// <summary>Peer streams of this type opened (explicitly or implicitly): the next index.</summary>
    public long OpenedCount { get; private set; }

    /// <summary>Peer streams of this type closed and released.</summary>
    public long ClosedCount { get; private set; }

    /// <summary>
    /// A frame referenced peer stream <paramref name="streamId"/>. Beyond our limit → STREAM_LIMIT_ERROR
    /// (RFC 9000 §4.6, §19.8). Otherwise, if new, it and every lower-numbered stream of this type become open:
    /// <paramref name="firstNewIndex"/> .. index inclusive (<paramref name="newCount"/> streams; 0 if already open).
    /// </summary>
    public TransportErrorCode OnPeerStream(long streamId, out long firstNewIndex, out long newCount, out string? reason)
    {
        long index = StreamId.Index(streamId);
        firstNewIndex = OpenedCount;
        newCount = 0;
        if (index >= MaxStreams)
        {
            reason = "peer opened a stream beyond MAX_STREAMS";
            return TransportErrorCode.StreamLimitError;
        }

        reason = null;
        if (index >= OpenedCount)
        {
            newCount = index + 1 - OpenedCount;
            OpenedCount = index + 1;
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>Whether the peer already opened the stream (a frame for a lower, now absent id is for a closed stream).</summary>
    public bool IsOpened(long streamId) => StreamId.Index(streamId) < OpenedCount;

    /// <summary>A peer stream of this type finished and was released: its credit may be returned.</summary>
    public void OnStreamClosed()
    {
        if (ClosedCount >= OpenedCount)
        {
            throw new InvalidOperationException("more streams closed than opened");
        }

        ClosedCount++;
    }

    /// <summary>The limit that keeps <see cref="Concurrency"/> streams available.</summary>
    public long TargetMaxStreams => Math.Min(ClosedCount + Concurrency, StreamId.MaxStreamCount);

    /// <summary>
    /// MAX_STREAMS due: a stream's credit was returned since the last advertisement (or a lost one must be repeated).
    /// As msquic, each closed stream is given back at once (a few bytes, usually riding with an ACK): the peer's
    /// StreamCapacityCallback sees +1 per completed stream, and a peer at its limit never waits for a batch.
    /// </summary>
    public bool NeedsMaxStreams => TargetMaxStreams > MaxStreams || _forced;

    /// <summary>
    /// MAX_STREAMS due and worth a packet of its own now: a lost one to repeat, or a peer left with less than half of
    /// <see cref="Concurrency"/> to open. Otherwise the credit rides with the next packet sent anyway (the connection
    /// holds it back a little while, see Connection's MaxStreamsHold timer): a request/response peer then gets each
    /// stream's credit back with the next response instead of in a packet per stream, and is never made to wait.
    /// </summary>
    public bool NeedsMaxStreamsPacket => _forced || (TargetMaxStreams > MaxStreams && 2 * (MaxStreams - OpenedCount) < Concurrency);

    /// <summary>Raises and returns the limit to put in MAX_STREAMS.</summary>
    public long CommitMaxStreams()
    {
        _forced = false;
        MaxStreams = Math.Max(MaxStreams, TargetMaxStreams);
        return MaxStreams;
    }

    /// <summary>A MAX_STREAMS frame was lost: repeat the current limit if it was the latest.</summary>
    public void OnMaxStreamsLost(long limit)
    {
        if (limit == MaxStreams)
        {
            _forced = true;
        }
    }

    /// <summary>Peer's STREAMS_BLOCKED: above 2^60 is FRAME_ENCODING_ERROR (RFC 9000 §19.14); repeats our limit.</summary>
    public TransportErrorCode OnStreamsBlocked(long limit, out string? reason)
    {
        if (limit < 0 || limit > StreamId.MaxStreamCount)
        {
            reason = "STREAMS_BLOCKED above 2^60";
            return TransportErrorCode.FrameEncodingError;
        }

        reason = null;
        if (limit >= MaxStreams && TargetMaxStreams > MaxStreams)
        {
            _forced = true;
        }

        return TransportErrorCode.NoError;
    }
}
