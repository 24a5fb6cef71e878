using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The streams that have a readable (or a writable) event waiting in the connection's event queue, so each stream has at
/// most one of each kind there. The id added last is kept beside the set: with one busy stream every received packet
/// (readable) or acknowledgment (writable) asks again for the same id, and that answer is one comparison instead of a
/// hash lookup. Invariant: the remembered id is in the set, or it is -1.
/// </summary>
internal sealed class PendingStreamEvents
{
    private readonly HashSet<long> _ids = new();
    private long _last = -1;

    /// <summary>True when <paramref name="streamId"/> had no event waiting: the caller queues one.</summary>
    public bool Add(long streamId)
    {
        if (streamId == _last) return false;
        bool added = _ids.Add(streamId);
        _last = streamId;
        return added;
    }

    /// <summary>The event of <paramref name="streamId"/> left the queue.</summary>
    public void Remove(long streamId)
    {
        if (_ids.Remove(streamId) && streamId == _last) _last = -1;
    }
}
