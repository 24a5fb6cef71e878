using System.Collections.Generic;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// How much one connection buffers for its streams (RFC 9000 §21.6, §21.8: a peer that reads slowly, or never, must not
/// commit the sender's memory).
/// <para>
/// Sending: <see cref="SendHeldBytes"/> counts the memory of the bytes the application handed over and the peer has not
/// acknowledged, over all streams (whole chunks). The budget, <see cref="SendLimitBytes"/>, is the connection's ideal
/// send buffer, as msquic calls it: it starts at <see cref="MinimumSendBytes"/> and grows in 1.5x steps to stay above
/// twice the largest congestion window seen (bandwidth x RTT plus as much again queued behind it, so the path never
/// waits for the application), up to <see cref="MaximumSendBytes"/>; it does not shrink. Bytes the peer's flow control
/// lets leave at once (within the stream's and the connection's credit) are taken while the connection holds less than
/// twice the budget, so streams with credit are not held up by streams whose peer stopped reading; bytes within the
/// stream's credit, while it holds less than the budget; both only while it holds less than its minimum budget plus
/// what the connection's credit lets the path hold (in flight plus the credit left: every stream sees the whole
/// connection credit, this bounds their sum). Bytes beyond that are taken only while the connection holds less than
/// its minimum budget, however far the budget grew: they cannot leave before the peer raises its limits, so a peer
/// that gave credit (growing the budget) and then stopped reading cannot make the grown budget fill with bytes that
/// never leave. A write held back waits (its buffer, not a copy): for acknowledgments or MAX_DATA when the budget or
/// the connection's credit held it back, for MAX_STREAM_DATA when the stream's credit did.
/// </para>
/// <para>
/// Memory: <see cref="ChunkBytes"/> counts the pooled chunks the connection's stream buffers hold (both directions) and
/// passes every change on to the listener's <see cref="EndpointBufferBudget"/>, until <see cref="Detach"/>.
/// </para>
/// Driver thread only.
/// </summary>
internal sealed class ConnectionBufferBudget
{
    /// <summary>The send budget a connection starts with, and keeps while the listener's budget is exceeded: 256 KiB.</summary>
    public const long MinimumSendBytes = 256 * 1024;

    /// <summary>The largest send budget: 16 MiB.</summary>
    public const long MaximumSendBytes = 16L << 20;

    private readonly Queue<long> _waiters = new();
    private readonly HashSet<long> _waiting = [];
    private readonly long _minimumSendBytes;
    private EndpointBufferBudget? _endpoint;

    public ConnectionBufferBudget(EndpointBufferBudget? endpoint = null, long minimumSendBytes = MinimumSendBytes)
    {
        _endpoint = endpoint;
        _minimumSendBytes = Math.Clamp(minimumSendBytes, MinimumSendBytes, MaximumSendBytes);
        SendLimitBytes = _minimumSendBytes;
    }

    /// <summary>
    /// Bytes the connection's send buffers hold (data written by the application and not yet acknowledged), counted in
    /// whole pooled chunks, as the memory they take: a thousand streams holding a few bytes each hold a thousand chunks.
    /// </summary>
    public long SendHeldBytes { get; private set; }

    /// <summary>The current send budget (see the class summary).</summary>
    public long SendLimitBytes { get; private set; }

    /// <summary>Bytes of pooled chunks the connection's stream buffers hold.</summary>
    public long ChunkBytes { get; private set; }

    /// <summary>Stream writes wait for acknowledgments to free budget.</summary>
    public bool HasWaiters => _waiters.Count > 0;

    /// <summary>A stream buffer rented (positive) or returned (negative) chunks; <paramref name="send"/>: a send buffer.</summary>
    public void OnChunksChanged(long delta, bool send = false)
    {
        ChunkBytes += delta;
        if (send) SendHeldBytes += delta;
        _endpoint?.Add(delta);
    }

    /// <summary>
    /// Grows the send budget to the next 1.5x step above twice the smaller of <paramref name="congestionWindow"/> and
    /// <paramref name="flowWindow"/>: the bytes the peer's connection-level flow control lets be in flight or leave now
    /// (its credit left plus the bytes in flight). A path's window that the peer's credit does not let the connection
    /// use buys nothing: a peer that stops raising MAX_DATA (a slow reader) holds the budget where it is.
    /// </summary>
    public void OnCongestionWindow(long congestionWindow, long flowWindow = long.MaxValue)
    {
        long target = 2 * Math.Min(congestionWindow, Math.Max(0, flowWindow));
        while (SendLimitBytes <= target && SendLimitBytes < MaximumSendBytes)
        {
            SendLimitBytes = Math.Min(MaximumSendBytes, SendLimitBytes + (SendLimitBytes / 2));
        }
    }

    /// <summary>
    /// The most one stream's send buffer may hold beyond its fixed bound (<see cref="StreamTableOptions.MaxSendBufferPerStream"/>):
    /// twice the path's bandwidth-delay product, at most the budget. The product is estimated from the bytes in flight
    /// scaled by the minimum over the smoothed round-trip time (the delivery rate, in flight / smoothed RTT, times the
    /// round trip without queues). A single stream on a long fat path (1 Gbit/s over 100 ms needs 12.5 MB in flight)
    /// then fills it instead of sending one fixed buffer per round trip, while on a path whose round trip is mostly
    /// queueing (loopback: tens of microseconds without queues) the fixed bound stays in force and no deeper queue is built.
    /// </summary>
    public long StreamPathLimitBytes { get; private set; }

    /// <summary>The path's estimates after acknowledgments: sets <see cref="StreamPathLimitBytes"/>.</summary>
    public void OnPathEstimate(long bytesInFlight, long minRttUs, long smoothedRttUs)
    {
        if (minRttUs <= 0 || smoothedRttUs <= 0) return;
        long bdp = (long)((double)bytesInFlight * Math.Min(minRttUs, smoothedRttUs) / smoothedRttUs);
        StreamPathLimitBytes = Math.Min(2 * bdp, Limit);
    }

    /// <summary>The budget in force: <see cref="SendLimitBytes"/>, or the minimum while the listener's budget is exceeded.</summary>
    private long Limit => _endpoint is { IsExceeded: true } ? _minimumSendBytes : SendLimitBytes;

    /// <summary>
    /// Bytes a stream may add now. The first <paramref name="sendableNow"/> (what the stream's and the connection's
    /// credit let it send at once): while the connection holds less than twice the budget; the first
    /// <paramref name="streamCredit"/> (within the stream's credit, some waiting for the connection's): while it holds
    /// less than the budget; both only while it holds less than its minimum budget plus <paramref name="flowWindow"/>
    /// (the bytes in flight plus the connection's credit left: every stream sees that credit, this bounds their sum).
    /// Any bytes: while it holds less than its minimum budget. Bytes beyond the credit cannot leave before the peer
    /// raises it, so a peer that gave credit (growing the budget) and then stopped reading cannot make the grown budget
    /// fill with bytes that never leave.
    /// </summary>
    public long RoomFor(long sendableNow, long streamCredit = 0, long flowWindow = long.MaxValue / 4)
    {
        long held = SendHeldBytes;
        long sendable = Math.Min(sendableNow, Math.Min(2 * Limit, CreditLimit(flowWindow)) - held);
        long withinStreamCredit = Math.Min(streamCredit, Math.Min(Limit, CreditLimit(flowWindow)) - held);
        return Math.Max(0, Math.Max(_minimumSendBytes - held, Math.Max(withinStreamCredit, sendable)));
    }

    private long CreditLimit(long flowWindow) => _minimumSendBytes + Math.Max(0, Math.Min(flowWindow, MaximumSendBytes * 2));

    /// <summary>
    /// Whether a write given <paramref name="room"/> bytes (from <see cref="RoomFor"/>), not all it asked, waits on the
    /// budget (<see cref="AddWaiter"/>: woken by acknowledgments or MAX_DATA): when bytes within its stream's credit
    /// were held back, or when the budget is at its minimum. Otherwise the stream's credit held it back, and
    /// MAX_STREAM_DATA wakes it.
    /// </summary>
    public bool WaitsOnBudget(long streamCredit, long room) => room < streamCredit || Limit <= _minimumSendBytes;

    /// <summary>The room acknowledgments or MAX_DATA made for the streams waiting on the budget (see <see cref="RoomFor"/>).</summary>
    public long WakeRoom(long flowWindow) => Math.Max(0, Math.Min(Limit, CreditLimit(flowWindow)) - SendHeldBytes);

    /// <summary>A stream's write found no room: it is told (StreamWritable) once acknowledgments free some.</summary>
    public void AddWaiter(long streamId)
    {
        if (_waiting.Add(streamId)) _waiters.Enqueue(streamId);
    }

    /// <summary>
    /// The next stream to wake while the budget has room, assuming each woken stream takes <paramref name="quantum"/>
    /// bytes; <paramref name="room"/> is decremented by it.
    /// </summary>
    public bool TryTakeWaiter(ref long room, long quantum, out long streamId)
    {
        streamId = -1;
        if (room <= 0 || !_waiters.TryDequeue(out streamId)) return false;
        _waiting.Remove(streamId);
        room -= quantum;
        return true;
    }

    /// <summary>The connection is gone: what it held no longer counts against the listener's budget.</summary>
    public void Detach()
    {
        _endpoint?.Add(-ChunkBytes);
        _endpoint = null;
    }
}
