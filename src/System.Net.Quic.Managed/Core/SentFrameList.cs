namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The frames one sent packet carried, reused through <see cref="SentFrameListPool"/> so sending a packet does not
/// allocate in steady state. A packet holds few frames; the array grows only for unusual packets and stays grown.
/// </summary>
internal sealed class SentFrameList
{
    private SentFrame[] _frames = new SentFrame[8];

    public int Count { get; private set; }

    public ReadOnlySpan<SentFrame> Frames => _frames.AsSpan(0, Count);

    public void Add(in SentFrame frame)
    {
        if (Count == _frames.Length) Array.Resize(ref _frames, _frames.Length * 2);
        _frames[Count++] = frame;
    }

    public void Clear() => Count = 0;
}
