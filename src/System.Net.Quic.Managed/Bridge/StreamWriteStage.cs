using System.Buffers;
using System.Net.Quic.Managed.Io;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A stream's staged writes: a small write is copied here on the caller's thread and completes at once (as msquic's
/// send buffering lets System.Net.Quic's WriteAsync complete without waiting for the connection's worker); one coalesced
/// work item then moves the bytes into the core on the driver thread. Bounded by <see cref="Capacity"/> bytes (a larger
/// write, or one that finds the stage full because the core's send buffer is, takes the request path and waits there:
/// backpressure is unchanged), and by the connection's <see cref="StagedBytesBudget"/> over all its streams. The buffer
/// is rented only while bytes are staged, so idle streams hold none.
/// Everything here is guarded by lock (this).
/// </summary>
internal sealed class StreamWriteStage : IDriverWorkItem
{
    /// <summary>The most bytes staged at once per stream.</summary>
    public const int Capacity = 16 * 1024;

    private readonly ManagedStream _stream;
    private readonly StagedBytesBudget _budget;
    private byte[]? _buffer;
    private int _start;
    private int _end;
    private bool _posted;

    public StreamWriteStage(ManagedStream stream, StagedBytesBudget budget)
    {
        _stream = stream;
        _budget = budget;
    }

    /// <summary>A FIN follows the staged bytes.</summary>
    public bool Fin { get; private set; }

    /// <summary>True while bytes or a FIN wait to go into the core.</summary>
    public bool IsEmpty => _end == _start && !Fin;

    /// <summary>
    /// App thread: copies <paramref name="data"/> (and the FIN) into the stage when it fits; false leaves the stage
    /// unchanged. <paramref name="post"/> says the caller must post this item to the driver (once per batch).
    /// </summary>
    public bool TryStage(ReadOnlySpan<byte> data, bool fin, out bool post)
    {
        post = false;
        int count = _end - _start;
        if (count + data.Length > Capacity || Fin) return false;
        if (data.Length > 0)
        {
            if (!_budget.TryTake(data.Length)) return false;
            if (_buffer is null || _end + data.Length > _buffer.Length)
            {
                byte[] next = _buffer is not null && count + data.Length <= _buffer.Length ? _buffer : ArrayPool<byte>.Shared.Rent(Math.Max(count + data.Length, 1024));
                if (count > 0) _buffer.AsSpan(_start, count).CopyTo(next);
                if (!ReferenceEquals(next, _buffer) && _buffer is not null) ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = next;
                _start = 0;
                _end = count;
            }
            data.CopyTo(_buffer.AsSpan(_end));
            _end += data.Length;
        }
        if (fin) Fin = true;
        post = !_posted;
        _posted = true;
        return true;
    }

    /// <summary>Driver thread: the staged bytes not yet taken.</summary>
    public ReadOnlySpan<byte> Pending => _buffer.AsSpan(_start, _end - _start);

    /// <summary>Driver thread: the next app write that stages posts again.</summary>
    public void ClearPosted() => _posted = false;

    /// <summary>Driver thread: <paramref name="count"/> bytes went into the core (the FIN with the last of them when
    /// <paramref name="finTaken"/>); the buffer goes back to the pool once everything did.</summary>
    public void Consume(int count, bool finTaken)
    {
        _start += count;
        _budget.Give(count);
        if (finTaken) Fin = false;
        if (_start == _end) ReleaseBuffer();
    }

    /// <summary>Any thread: the write side is gone (reset, stopped, connection ended): staged bytes are dropped.</summary>
    public void Drop()
    {
        Fin = false;
        ReleaseBuffer();
    }

    private void ReleaseBuffer()
    {
        _budget.Give(_end - _start);
        if (_buffer is not null) ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = null;
        _start = 0;
        _end = 0;
    }

    public void Execute(long nowUs) => _stream.MoveStagedOnDriver();

    public void Abandon()
    {
        lock (this)
        {
            Drop();
        }
    }
}
