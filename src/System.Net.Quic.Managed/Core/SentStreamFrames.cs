namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The frames of one stream in a sent packet, from one visit of the send scheduler: its control frames (the values
/// sent, compared with the stream's state when lost) and its STREAM ranges, <see cref="RangeCount"/> of
/// <see cref="SentFrames.StreamRanges"/> from <see cref="FirstRange"/>. Kept per visit and in visit order because a
/// loss re-queues the streams in that order.
/// </summary>
internal struct SentStreamFrames
{
    public SentStreamFrames(long streamId, int firstRange)
    {
        StreamId = streamId;
        FirstRange = firstRange;
    }

    public readonly long StreamId;
    public readonly int FirstRange;
    public int RangeCount;
    public bool ResetStream;
    public bool StopSending;
    public long? MaxStreamData;

    /// <summary>The limit a STREAM_DATA_BLOCKED frame reported.</summary>
    public long? DataBlocked;
}

/// <summary>STREAM data [Offset, Offset+Length) of a stream, with FIN.</summary>
internal readonly record struct SentStreamRange(long Offset, int Length, bool Fin);

/// <summary>CRYPTO data [Offset, Offset+Length) of the packet's own space.</summary>
internal readonly record struct SentCryptoRange(long Offset, int Length);
