using System.Buffers;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A stream's received bytes between the driver thread (which moves them out of the core) and ReadAsync (which
/// copies them out on the caller's thread), as System.Net.Quic's ReceiveBuffers: a FIFO of array segments.
/// <para>
/// Whole chunks of the core's receive buffer (<see cref="StreamChunkPool"/> chunks, 4 KiB) come over without a copy
/// (<see cref="AppendTaken"/>): the driver thread hands the array over and the reader's copy into its own buffer is
/// the only one, on the reader's thread. When drained they go back to the list of the driver thread that took them
/// (<see cref="StreamChunkPool.ReturnTo"/>), which rents them again for the next data. The bytes of a chunk the core
/// is still filling are copied (<see cref="GetWriteSpan"/>, <see cref="Advance"/>) into chunks of this queue's own
/// (16 KiB from <see cref="Chunks"/>; the last one is kept for the next data until <see cref="Clear"/>, the end of the
/// read side, so a stream read as fast as data comes reuses it without pool traffic). A few bytes arriving at an empty
/// queue (a request header, say) take a small array from ArrayPool.Shared instead of a chunk (until the stream once
/// took a full chunk: a transfer keeps to chunks), so thousands of streams that each got a few bytes neither hold nor
/// cycle a 16 KiB chunk each.
/// </para>
/// Its size is bounded by the stream's receive window (the core's flow control: bytes here keep their credit until
/// the application consumed them). Not thread-safe: the owner serializes access with its lock.
/// </summary>
internal sealed class StreamReceiveQueue
{
    public const int ChunkSize = 16 * 1024;

    /// <summary>The most bytes an empty queue takes into a small array (rented for what is readable) instead of a chunk.</summary>
    public const int SmallArrivalBytes = 2048;

    /// <summary>
    /// The queue's own chunks' pool. They are rented on the driver thread and returned on the reader's, a pattern
    /// ArrayPool.Shared (per-thread and per-core caches of a few arrays) answers by allocating a new chunk now and then;
    /// one pool shared by all threads does not. It keeps up to 1,024 chunks (16 MiB, one default stream window).
    /// </summary>
    internal static readonly ArrayPool<byte> Chunks = ArrayPool<byte>.Create(ChunkSize, 1024);

    private enum Owner : byte
    {
        Chunk,   // a 16 KiB chunk of Chunks
        Small,   // a small array of ArrayPool.Shared
        Taken,   // a chunk of the core's buffer, handed over by a driver thread (its list in _takenFrom)
    }

    private struct Segment
    {
        public byte[] Array;
        public int Start;
        public int End;
        public Owner Owner;
    }

    // A ring of segments: _segments[(_first + i) % length] for i in [0, _count).
    private Segment[] _segments = System.Array.Empty<Segment>();
    private byte[]? _spare;
    // The list of the driver thread taken chunks go back to (one connection, one driver thread).
    private object? _takenFrom;
    private bool _tookChunk;
    private int _first;
    private int _count;

    /// <summary>Bytes buffered.</summary>
    public long Length { get; private set; }

    public bool IsEmpty => Length == 0;

    /// <summary>
    /// Driver thread: appends <paramref name="length"/> bytes at <paramref name="start"/> of a chunk taken out of the
    /// core's buffer, without copying; the chunk is this queue's until drained, then goes back to the calling thread's
    /// list.
    /// </summary>
    public void AppendTaken(byte[] chunk, int start, int length)
    {
        _takenFrom ??= StreamChunkPool.ThreadCache;
        Append(new Segment { Array = chunk, Start = start, End = start + length, Owner = Owner.Taken });
        _tookChunk = true;
        Length += length;
    }

    /// <summary>
    /// Space to write into (at least one byte): the free end of the last segment when it is this queue's own, or a new
    /// one. <paramref name="readable"/> is what is about to arrive: up to <see cref="SmallArrivalBytes"/> into an empty
    /// queue with no spare chunk take a small array, until the stream once needed a full chunk.
    /// </summary>
    public Span<byte> GetWriteSpan(long readable = ChunkSize)
    {
        if (_count > 0)
        {
            ref Segment last = ref _segments[(_first + _count - 1) % _segments.Length];
            if (last.Owner != Owner.Taken && last.End < last.Array.Length) return last.Array.AsSpan(last.End);
        }
        byte[] next;
        Owner owner = Owner.Chunk;
        if (_spare is not null) next = _spare;
        else if (_count == 0 && readable <= SmallArrivalBytes && !_tookChunk)
        {
            next = ArrayPool<byte>.Shared.Rent((int)Math.Max(1, readable));
            owner = Owner.Small;
        }
        else
        {
            next = Chunks.Rent(ChunkSize);
            _tookChunk = true; // a transfer: its later small arrivals take chunks too (no cross-thread small-array traffic)
        }
        _spare = null;
        Append(new Segment { Array = next, Owner = owner });
        return next;
    }

    /// <summary><paramref name="bytes"/> were written into the span <see cref="GetWriteSpan"/> returned.</summary>
    public void Advance(int bytes)
    {
        _segments[(_first + _count - 1) % _segments.Length].End += bytes;
        Length += bytes;
        if (Length == 0) Drop(); // a chunk taken for nothing goes back to the pool
    }

    /// <summary>Copies (and removes) up to <paramref name="destination"/>.Length bytes; returns how many.</summary>
    public int CopyTo(Span<byte> destination)
    {
        int copied = 0;
        while (copied < destination.Length && Length > 0)
        {
            ref Segment first = ref _segments[_first];
            int n = Math.Min(first.End - first.Start, destination.Length - copied);
            first.Array.AsSpan(first.Start, n).CopyTo(destination.Slice(copied));
            copied += n;
            first.Start += n;
            Length -= n;
            // The last segment of this queue's own stays while it has room for the next data (unless all is drained).
            if (first.Start == first.End && (_count > 1 || Length == 0 || first.Owner == Owner.Taken)) RemoveFirst();
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
        ref Segment first = ref _segments[_first];
        byte[] array = first.Array;
        switch (first.Owner)
        {
            case Owner.Taken:
                StreamChunkPool.ReturnTo(_takenFrom!, array);
                break;
            case Owner.Small:
                ArrayPool<byte>.Shared.Return(array);
                break;
            default:
                // A spare is kept only while more is queued (a transfer under way): an emptied queue holds no chunk, so
                // the streams an application has read to the end, or thousands it keeps open, pin no receive memory.
                if (_spare is null && _count > 1) _spare = array;
                else Chunks.Return(array);
                break;
        }
        first = default;
        _first = (_first + 1) % _segments.Length;
        _count--;
        if (_count == 0) _first = 0;
    }

    private void Append(Segment segment)
    {
        if (_count == _segments.Length) Grow();
        _segments[(_first + _count) % _segments.Length] = segment;
        _count++;
    }

    private void Grow()
    {
        var larger = new Segment[Math.Max(4, _segments.Length * 2)];
        for (int i = 0; i < _count; i++) larger[i] = _segments[(_first + i) % _segments.Length];
        _segments = larger;
        _first = 0;
    }
}
