using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>A per-connection free list of <see cref="SentFrameList"/> (single-threaded, like the connection).</summary>
internal sealed class SentFrameListPool
{
    private readonly Stack<SentFrameList> _free = new();
    private readonly int _maxRetained;

    public SentFrameListPool(int maxRetained = 4096) => _maxRetained = maxRetained;

    public int Retained => _free.Count;

    public SentFrameList Rent() => _free.TryPop(out SentFrameList? list) ? list : new SentFrameList();

    public void Return(SentFrameList list)
    {
        list.Clear();
        if (_free.Count < _maxRetained) _free.Push(list);
    }
}
