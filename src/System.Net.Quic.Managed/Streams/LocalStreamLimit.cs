using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// How many streams of one type (bidirectional or unidirectional) we may open: the peer's cumulative MAX_STREAMS
/// limit (RFC 9000 §4.6). Opening beyond it is refused (the caller waits) and STREAMS_BLOCKED is signalled once per
/// limit (§19.14).
/// </summary>
internal sealed class LocalStreamLimit
{
    private long _blockedSignalledAt = -1;
    private bool _openRefused;

    public LocalStreamLimit(bool isServer, bool unidirectional, long peerMaxStreams = 0)
    {
        IsServer = isServer;
        IsUnidirectional = unidirectional;
        MaxStreams = Math.Clamp(peerMaxStreams, 0, StreamId.MaxStreamCount);
    }

    public bool IsServer { get; }

    public bool IsUnidirectional { get; }

    /// <summary>Cumulative number of streams of this type the peer allows us to open.</summary>
    public long MaxStreams { get; private set; }

    /// <summary>Streams of this type opened so far (the index of the next one).</summary>
    public long OpenedCount { get; private set; }

    public bool CanOpen => OpenedCount < MaxStreams;

    /// <summary>Whether a stream id of this type was already opened by us (a frame for a later id is STREAM_STATE_ERROR).</summary>
    public bool IsOpened(long streamId) => StreamId.Index(streamId) < OpenedCount;

    /// <summary>Opens the next stream, or returns false (and arms STREAMS_BLOCKED) if the peer's limit is reached.</summary>
    public bool TryOpen(out long streamId)
    {
        if (OpenedCount >= MaxStreams)
        {
            _openRefused = true;
            streamId = -1;
            return false;
        }

        streamId = StreamId.Make(OpenedCount, IsServer, IsUnidirectional);
        OpenedCount++;
        return true;
    }

    /// <summary>
    /// Peer's MAX_STREAMS (or its initial_max_streams transport parameter). Above 2^60 is FRAME_ENCODING_ERROR
    /// (RFC 9000 §19.11); a smaller value than known is ignored. Returns NoError.
    /// </summary>
    public TransportErrorCode OnMaxStreams(long maxStreams, out string? reason)
    {
        if (maxStreams < 0 || maxStreams > StreamId.MaxStreamCount)
        {
            reason = "MAX_STREAMS above 2^60";
            return TransportErrorCode.FrameEncodingError;
        }

        reason = null;
        if (maxStreams > MaxStreams)
        {
            MaxStreams = maxStreams;
            _openRefused = false;
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>STREAMS_BLOCKED due: an open was refused at the current limit and this limit was not yet signalled.</summary>
    public bool NeedsStreamsBlocked => _openRefused && OpenedCount >= MaxStreams && _blockedSignalledAt != MaxStreams;

    public void OnStreamsBlockedSent(long limit) => _blockedSignalledAt = Math.Max(_blockedSignalledAt, limit);

    public void OnStreamsBlockedLost(long limit)
    {
        if (limit == _blockedSignalledAt && limit == MaxStreams)
        {
            _blockedSignalledAt = -1;
        }
    }
}
