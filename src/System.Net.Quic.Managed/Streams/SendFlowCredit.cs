namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Credit the peer granted us to send, for one stream (MAX_STREAM_DATA) or the connection (MAX_DATA). RFC 9000 §4.1.
/// Also decides when a DATA_BLOCKED / STREAM_DATA_BLOCKED frame is due: once per limit at which we are blocked.
/// </summary>
internal sealed class SendFlowCredit
{
    private long _blockedSignalledAt = -1;

    public SendFlowCredit(long initialMaxData)
    {
        if (initialMaxData < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(initialMaxData));
        }

        MaxData = initialMaxData;
    }

    /// <summary>As new, for a recycled stream (see <see cref="StreamTable"/>'s pool).</summary>
    public void Reuse(long initialMaxData)
    {
        _blockedSignalledAt = -1;
        MaxData = initialMaxData;
        Sent = 0;
    }

    /// <summary>The largest limit the peer advertised (an absolute byte count / offset).</summary>
    public long MaxData { get; private set; }

    /// <summary>Bytes of credit consumed (for a stream: the highest offset sent; for the connection: the sum over streams).</summary>
    public long Sent { get; private set; }

    public long Available => MaxData - Sent;

    public bool IsBlocked => Sent >= MaxData;

    /// <summary>
    /// A MAX_DATA / MAX_STREAM_DATA value from the peer. Limits never shrink: a smaller value is ignored (it may be
    /// reordered). RFC 9000 §19.9, §19.10. Returns true if credit increased (blocked senders may resume).
    /// </summary>
    public bool OnMaxDataReceived(long maxData)
    {
        if (maxData <= MaxData)
        {
            return false;
        }

        MaxData = maxData;
        return true;
    }

    /// <summary>Records <paramref name="bytes"/> of new (never sent before) data.</summary>
    public void AddSent(long bytes)
    {
        if (bytes < 0 || bytes > Available)
        {
            throw new InvalidOperationException("sending beyond the peer's flow-control limit");
        }

        Sent += bytes;
    }

    /// <summary>
    /// Whether a *_BLOCKED frame carrying <see cref="MaxData"/> is due: we are at the limit and have not yet signalled
    /// this limit. RFC 9000 §4.1: a sender SHOULD send it once when it has data but is blocked. The caller checks
    /// that it actually has data waiting.
    /// </summary>
    public bool NeedsBlockedFrame => IsBlocked && _blockedSignalledAt != MaxData;

    /// <summary>Records that a *_BLOCKED frame carrying <paramref name="limit"/> was sent.</summary>
    public void OnBlockedFrameSent(long limit) => _blockedSignalledAt = Math.Max(_blockedSignalledAt, limit);

    /// <summary>A *_BLOCKED frame was lost: resend it only if we are still blocked at that limit.</summary>
    public void OnBlockedFrameLost(long limit)
    {
        if (limit == _blockedSignalledAt && limit == MaxData)
        {
            _blockedSignalledAt = -1;
        }
    }
}
