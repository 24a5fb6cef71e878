using System.Buffers;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A stream's received bytes between the driver thread (which moves them out of the core) and ReadAsync (which
/// copies them out on the caller's thread), as System.Net.Quic's ReceiveBuffers: a FIFO of fixed-size chunks rented
/// from <see cref="Chunks"/> and returned as soon as they are drained, except the last one, kept for the next
/// data until <see cref="Clear"/> (the end of the read side): a stream read as fast as data comes reuses one chunk
/// without pool traffic, and steady-state reads allocate nothing. A few bytes arriving at an empty queue (a request
/// header, say) take a small array from ArrayPool.Shared instead of a chunk (until the stream once took a full chunk: a
/// transfer keeps to chunks), so thousands of streams that each got a
/// few bytes neither hold nor cycle a 16 KiB chunk each (the chunks' pool keeps what it was given back). Its size is
/// bounded by the stream's receive
/// window (the core's flow control: bytes here keep their credit until the application consumed them). Not
/// thread-safe: the owner serializes access with its lock.
/// </summary>
internal sealed class StreamReceiveQueue
{
    public const int ChunkSize = 16 * 1024;

    /// <summary>The most bytes an empty queue takes into a small array (rented for what is readable) instead of a chunk.</summary>
    public const int SmallArrivalBytes = 2048;

    /// <summary>
    /// The chunks' own pool. They are rented on the driver thread and returned on the reader's, a pattern
    /// ArrayPool.Shared (per-thread and per-core caches of a few arrays) answers by allocating a new chunk now and then
    /// (QuicPerf's bulk download allocated 0.5-4 KB per MiB that way); one pool shared by all threads does not. It keeps
    /// up to 1,024 chunks (16 MiB, one default stream window: a reader that falls a window behind returns that many).
    /// </summary>
    internal static readonly ArrayPool<byte> Chunks = ArrayPool<byte>.Create(ChunkSize, 1024);

    // A ring of chunk references: _chunks[(_first + i) % length] for i in [0, _count).
    private byte[]?[] _chunks = Array.Empty<byte[]?>();
    private byte[]? _spare;
    private bool _tookChunk;
    private int _first;
    private int _count;
    private int _readOffset;  // in the first chunk
    private int _writeOffset; // in the last chunk

    /// <summary>Bytes buffered.</summary>
    public long Length { get; private set; }

    public bool IsEmpty => Length == 0;

    /// <summary>
    /// Space to write into (at least one byte): the free end of the last chunk, or a new one. <paramref name="readable"/>
    /// is what is about to arrive: up to <see cref="SmallArrivalBytes"/> into an empty queue with no spare chunk take
    /// a small array, until the stream once needed a full chunk.
    /// </summary>
    public Span<byte> GetWriteSpan(long readable = ChunkSize)
    {
        if (_count == 0 || _writeOffset == _chunks[(_first + _count - 1) % _chunks.Length]!.Length)
        {
            if (_count == _chunks.Length) Grow();
            byte[] next;
            if (_spare is not null) next = _spare;
            else if (_count == 0 && readable <= SmallArrivalBytes && !_tookChunk) next = ArrayPool<byte>.Shared.Rent((int)Math.Max(1, readable));
            else
            {
                next = Chunks.Rent(ChunkSize);
                _tookChunk = true; // a transfer: its later small arrivals take chunks too (no cross-thread small-array traffic)
            }
            _chunks[(_first + _count) % _chunks.Length] = next;
            _spare = null;
            _count++;
            _writeOffset = 0;
        }
        byte[] last = _chunks[(_first + _count - 1) % _chunks.Length]!;
        return last.AsSpan(_writeOffset, last.Length - _writeOffset);
    }

    /// <summary><paramref name="bytes"/> were written into the span <see cref="GetWriteSpan"/> returned.</summary>
    public void Advance(int bytes)
    {
        _writeOffset += bytes;
        Length += bytes;
        if (Length == 0) Drop(); // a chunk taken for nothing goes back to the pool
    }

    /// <summary>Copies (and removes) up to <paramref name="destination"/>.Length bytes; returns how many.</summary>
    public int CopyTo(Span<byte> destination)
    {
        int copied = 0;
        while (copied < destination.Length && Length > 0)
        {
            byte[] chunk = _chunks[_first]!;
            int end = _count == 1 ? _writeOffset : chunk.Length;
            int n = Math.Min(end - _readOffset, destination.Length - copied);
            chunk.AsSpan(_readOffset, n).CopyTo(destination.Slice(copied));
            copied += n;
            _readOffset += n;
            Length -= n;
            if (_readOffset == end && (_count > 1 || Length == 0)) RemoveFirst();
        }
        return copied;
    }

    /// <summary>Drops everything buffered (the read side ended, was aborted or reset) and returns every chunk.</summary>
    public void Clear()
    {
        Drop();
        if (_spare is { } spare) Chunks.Return(spare); // only full-size chunks become spares
        _spare = null;
    }

    private void Drop()
    {
        while (_count > 0) RemoveFirst();
        Length = 0;
    }

    private void RemoveFirst()
    {
        byte[] chunk = _chunks[_first]!;
        // A spare is kept only while more is queued (a transfer under way): an emptied queue holds no chunk, so the
        // streams an application has read to the end, or thousands it keeps open, pin no receive memory.
        if (chunk.Length != ChunkSize) ArrayPool<byte>.Shared.Return(chunk);
        else if (_spare is null && _count > 1) _spare = chunk;
        else Chunks.Return(chunk);
        _chunks[_first] = null;
        _first = (_first + 1) % _chunks.Length;
        _count--;
        _readOffset = 0;
        if (_count == 0)
        {
            _first = 0;
            _writeOffset = 0;
        }
    }

    private void Grow()
    {
        var larger = new byte[]?[Math.Max(4, _chunks.Length * 2)];
        for (int i = 0; i < _count; i++) larger[i] = _chunks[(_first + i) % _chunks.Length];
        _chunks = larger;
        _first = 0;
    }
}
