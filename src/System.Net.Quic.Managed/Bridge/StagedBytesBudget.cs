using System.Threading;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// The bytes a connection's streams hold in their <see cref="StreamWriteStage"/>s together: a small write completes on
/// the caller's thread only while the connection's total stays within <see cref="LimitBytes"/>, so a thousand streams
/// whose peer reads nothing cannot each park a stage's worth of memory. Past it a write takes the request path and
/// waits for the core's send budget (the application's buffer, not a copy, is what waits then). Any thread.
/// </summary>
internal sealed class StagedBytesBudget
{
    /// <summary>Staged bytes per connection, all streams together: 256 KiB (sixteen full stages).</summary>
    public const int LimitBytes = 256 * 1024;

    private int _bytes;

    public int Bytes => Volatile.Read(ref _bytes);

    /// <summary>Takes <paramref name="count"/> bytes when they fit.</summary>
    public bool TryTake(int count)
    {
        if (Interlocked.Add(ref _bytes, count) <= LimitBytes) return true;
        Interlocked.Add(ref _bytes, -count);
        return false;
    }

    public void Give(int count)
    {
        if (count > 0) Interlocked.Add(ref _bytes, -count);
    }
}
