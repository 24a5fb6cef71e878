namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>One direction of a <see cref="SimulatedLink"/>: its conditions, its bottleneck state and its statistics.</summary>
internal sealed class SimulatedLinkDirection
{
    private readonly Queue<(long FinishUs, int Length)> _inQueue = new();

    internal SimulatedLinkDirection(int id, int fromHost, int toHost, LinkConditions conditions)
    {
        Id = id;
        FromHost = fromHost;
        ToHost = toHost;
        Conditions = conditions;
    }

    /// <summary>Network-wide id, used in the trace.</summary>
    public int Id { get; }

    public int FromHost { get; }

    public int ToHost { get; }

    public string Name => $"h{FromHost}->h{ToHost}";

    public LinkConditions Conditions { get; set; }

    public LinkStatistics Statistics { get; } = new();

    /// <summary>Bytes accepted by the bottleneck whose serialization has not finished (as of the last send).</summary>
    public long QueuedBytes { get; private set; }

    /// <summary>Deterministic burst: the next <paramref name="count"/> datagrams sent on this direction are dropped.</summary>
    public void DropNext(int count) => PendingForcedDrops += count;

    internal int PendingForcedDrops { get; set; }

    internal bool InBadState { get; set; }

    /// <summary>When the bottleneck becomes free, in µs × bits/s (exact, see SimulatedNetwork).</summary>
    internal Int128 BusyUntilScaled { get; set; }

    internal long LastInOrderArrivalUs { get; set; } = long.MinValue;

    internal long HighestDeliveredIndex { get; set; } = -1;

    internal void DrainQueue(long nowUs)
    {
        while (_inQueue.TryPeek(out (long FinishUs, int Length) head) && head.FinishUs <= nowUs)
        {
            _inQueue.Dequeue();
            QueuedBytes -= head.Length;
        }
    }

    internal void Enqueue(long finishUs, int length)
    {
        _inQueue.Enqueue((finishUs, length));
        QueuedBytes += length;
    }

    public override string ToString() => Name;
}
