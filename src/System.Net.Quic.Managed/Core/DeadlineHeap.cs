using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>An item of a <see cref="DeadlineHeap{T}"/>: the deadline its live heap entry has, and whether it still belongs to the heap's owner.</summary>
internal interface IDeadlineItem
{
    /// <summary>The deadline of the item's live entry (long.MaxValue: none). Written by the heap only.</summary>
    long ScheduledUs { get; set; }

    /// <summary>False once the item left its owner (a removed connection, a detached driver): its entries are stale.</summary>
    bool IsScheduledHere { get; }
}

/// <summary>
/// A min-heap of item deadlines with lazy invalidation: an entry is live while it equals the item's
/// <see cref="IDeadlineItem.ScheduledUs"/>; stale entries are dropped when they reach the top, or all at once (rebuilt from
/// the owner's items) when they outnumber the live ones, so an item whose deadline moves with every step cannot grow it.
/// The endpoint keeps one for its connections, a client loop one for its drivers. Single-threaded.
/// </summary>
internal sealed class DeadlineHeap<T> where T : class, IDeadlineItem
{
    private readonly PriorityQueue<T, long> _heap = new();
    private int _live;

    /// <summary>Entries in the heap, stale ones included (for tests).</summary>
    public int Count => _heap.Count;

    /// <summary>Gives <paramref name="item"/> the deadline <paramref name="deadline"/>; <paramref name="all"/> (the owner's items) serves a rebuild.</summary>
    public void Schedule(T item, long deadline, List<T> all)
    {
        if (deadline == item.ScheduledUs) return;
        if (item.ScheduledUs != long.MaxValue) _live--;
        item.ScheduledUs = deadline;
        if (deadline == long.MaxValue) return;
        _live++;
        _heap.Enqueue(item, deadline);
        if (_heap.Count > 2 * _live + 64) Rebuild(all);
    }

    /// <summary>An item that leaves keeps no live entry.</summary>
    public void Unschedule(T item)
    {
        if (item.ScheduledUs != long.MaxValue) _live--;
        item.ScheduledUs = long.MaxValue;
    }

    /// <summary>The earliest live deadline (long.MaxValue: none); stale entries on top are dropped on the way.</summary>
    public long NextDeadlineUs
    {
        get
        {
            while (_heap.TryPeek(out T? item, out long deadline))
            {
                if (item.ScheduledUs == deadline && item.IsScheduledHere) return deadline;
                _heap.Dequeue();
            }
            return long.MaxValue;
        }
    }

    /// <summary>Takes the next item whose deadline is at or before <paramref name="nowUs"/>; its entry is no longer live.</summary>
    public bool TryTakeDue(long nowUs, out T item)
    {
        while (_heap.TryPeek(out T? next, out long deadline) && deadline <= nowUs)
        {
            _heap.Dequeue();
            if (next.ScheduledUs != deadline || !next.IsScheduledHere) continue; // stale
            next.ScheduledUs = long.MaxValue;
            _live--;
            item = next;
            return true;
        }
        item = null!;
        return false;
    }

    public void Clear()
    {
        _heap.Clear();
        _live = 0;
    }

    private void Rebuild(List<T> all)
    {
        Clear();
        foreach (T item in all)
        {
            if (item.ScheduledUs == long.MaxValue) continue;
            _heap.Enqueue(item, item.ScheduledUs);
            _live++;
        }
    }
}
