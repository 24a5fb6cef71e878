using System.Collections.Generic;

namespace System.Net.Quic.Managed.Core;

/// <summary>A per-connection free list of <see cref="SentFrames"/> (single-threaded, like the connection).</summary>
internal sealed class SentFramesPool
{
    private readonly Stack<SentFrames> _free = new();
    private readonly int _maxRetained;

    public SentFramesPool(int maxRetained = 4096) => _maxRetained = maxRetained;

    public int Retained => _free.Count;

    public SentFrames Rent() => _free.TryPop(out SentFrames? frames) ? frames : new SentFrames();

    public void Return(SentFrames frames)
    {
        frames.Clear();
        if (_free.Count < _maxRetained) _free.Push(frames);
    }
}
