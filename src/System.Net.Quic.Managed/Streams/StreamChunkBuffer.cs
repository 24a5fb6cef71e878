namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Bytes of one stream addressed by absolute stream offset, stored in fixed-size chunks rented from
/// <see cref="StreamChunkPool"/>. A chunk is rented when first written and returned once everything before its end
/// is released, so memory tracks the live window of the stream, not its history. The slot ring grows (doubling) only
/// when the live window spans more chunks than ever before.
/// <para>
/// A mutable struct, held in a field of its owner (a send or receive buffer), never copied: each stream side carries
/// its fields inline instead of a separate object.
/// </para>
/// </summary>
internal struct StreamChunkBuffer
{
    public const int DefaultChunkSize = 4096;

    private readonly int _chunkSize;
    private byte[]?[] _ring;
    private int _head;
    private long _baseChunk;
    private int _allocatedChunks;
    private readonly ConnectionBufferBudget? _budget;
    private readonly bool _sendSide;

    /// <param name="chunkSize">Size of the pooled chunks.</param>
    /// <param name="budget">The connection's account every rented and returned chunk is counted in (null: none).</param>
    /// <param name="sendSide">The chunks hold data to send: they also count as the connection's held send bytes.</param>
    public StreamChunkBuffer(int chunkSize = DefaultChunkSize, ConnectionBufferBudget? budget = null, bool sendSide = false)
    {
        _budget = budget;
        _sendSide = sendSide;
        if (chunkSize < 16)
        {
            throw new ArgumentOutOfRangeException(nameof(chunkSize));
        }

        _chunkSize = chunkSize;
        // The ring comes with the first chunk: a stream that never sends (or never receives) holds none.
        _ring = Array.Empty<byte[]?>();
    }

    public int ChunkSize => _chunkSize;

    /// <summary>Bytes currently rented (chunks held times the chunk size).</summary>
    public long AllocatedBytes => (long)_allocatedChunks * _chunkSize;

    /// <summary>Offset below which everything has been released.</summary>
    public long ReleasedOffset => _baseChunk * _chunkSize;

    /// <summary>Stores <paramref name="data"/> at <paramref name="offset"/>, renting chunks as needed.</summary>
    public void Write(long offset, ReadOnlySpan<byte> data)
    {
        if (offset < _baseChunk * _chunkSize)
        {
            throw new ArgumentOutOfRangeException(nameof(offset), "offset already released");
        }

        while (!data.IsEmpty)
        {
            long chunk = offset / _chunkSize;
            int within = (int)(offset - chunk * _chunkSize);
            int n = Math.Min(data.Length, _chunkSize - within);
            byte[] array = GetOrRent(chunk);
            data.Slice(0, n).CopyTo(array.AsSpan(within, n));
            data = data.Slice(n);
            offset += n;
        }
    }

    /// <summary>Copies bytes starting at <paramref name="offset"/> into <paramref name="destination"/>; they must have been written.</summary>
    public void CopyTo(long offset, Span<byte> destination)
    {
        while (!destination.IsEmpty)
        {
            ReadOnlySpan<byte> span = GetSpan(offset, destination.Length);
            span.CopyTo(destination);
            destination = destination.Slice(span.Length);
            offset += span.Length;
        }
    }

    /// <summary>The longest contiguous run (at most <paramref name="maxLength"/>, within one chunk) stored at <paramref name="offset"/>.</summary>
    public ReadOnlySpan<byte> GetSpan(long offset, int maxLength)
    {
        long chunk = offset / _chunkSize;
        long slot = chunk - _baseChunk;
        if (offset < 0 || slot < 0 || slot >= _ring.Length)
        {
            throw new InvalidOperationException("offset not stored");
        }

        byte[]? array = _ring[(int)((_head + slot) % _ring.Length)];
        if (array is null)
        {
            throw new InvalidOperationException("offset not stored");
        }

        int within = (int)(offset - chunk * _chunkSize);
        return array.AsSpan(within, Math.Min(maxLength, _chunkSize - within));
    }

    /// <summary>
    /// Takes the chunk holding <paramref name="offset"/> out of the buffer (it must be held) after releasing every chunk
    /// below it: the caller owns the array (and gives it back to <see cref="StreamChunkPool"/>); the buffer starts at the
    /// next chunk.
    /// </summary>
    public byte[] TakeChunkAt(long offset)
    {
        ReleaseBefore(offset);
        long chunk = offset / _chunkSize;
        if (chunk != _baseChunk || _ring.Length == 0 || _ring[_head] is null)
        {
            throw new InvalidOperationException("offset not stored");
        }

        return DetachHead()!;
    }

    /// <summary>Returns to the pool every chunk lying entirely below <paramref name="offset"/>.</summary>
    public void ReleaseBefore(long offset)
    {
        long targetBase = offset / _chunkSize;
        if (_allocatedChunks == 0)
        {
            // Nothing held: jump straight to the target instead of walking empty slots.
            _baseChunk = Math.Max(_baseChunk, targetBase);
            _head = 0;
            return;
        }

        while (_baseChunk < targetBase)
        {
            if (DetachHead() is byte[] array) StreamChunkPool.Return(array);
            if (_allocatedChunks == 0)
            {
                // Nothing held: jump straight to the target instead of walking empty slots.
                _baseChunk = targetBase;
                break;
            }
        }
    }

    /// <summary>
    /// Takes the first chunk's slot out of the ring (its array, or null for an empty slot) and starts the buffer at the
    /// next chunk; with nothing left held, the ring starts over at slot 0.
    /// </summary>
    private byte[]? DetachHead()
    {
        ref byte[]? slot = ref _ring[_head];
        byte[]? array = slot;
        if (array is not null)
        {
            slot = null;
            _allocatedChunks--;
            _budget?.OnChunksChanged(-_chunkSize, _sendSide);
        }

        _baseChunk++;
        _head = _allocatedChunks == 0 ? 0 : (_head + 1) % _ring.Length;
        return array;
    }

    /// <summary>Returns every chunk to the pool (stream reset or closed); the buffer stays usable above <paramref name="offset"/>.</summary>
    public void ReleaseAll(long offset)
    {
        if (_allocatedChunks > 0) _budget?.OnChunksChanged(-AllocatedBytes, _sendSide);
        for (int i = 0; i < _ring.Length; i++)
        {
            if (_ring[i] is byte[] array)
            {
                StreamChunkPool.Return(array);
                _ring[i] = null;
            }
        }

        _allocatedChunks = 0;
        _head = 0;
        _baseChunk = Math.Max(_baseChunk, offset / _chunkSize);
    }

    /// <summary>
    /// As <see cref="ReleaseAll"/>, and a ring of more than <see cref="KeptRingSlots"/> slots goes too (it comes again with
    /// the next chunk): for a side done with. A smaller ring stays for the stream's next use (see <see cref="Recycle"/>).
    /// </summary>
    public void ReleaseStorage(long offset)
    {
        ReleaseAll(offset);
        if (_ring.Length > KeptRingSlots) _ring = Array.Empty<byte[]?>();
    }

    /// <summary>The largest ring <see cref="ReleaseStorage"/> and <see cref="Recycle"/> keep: 32 slots (128 KiB of 4 KiB chunks), 280 bytes.</summary>
    public const int KeptRingSlots = 32;

    /// <summary>Empty again from offset 0, for a recycled stream: every chunk back to the pool, a small ring kept.</summary>
    public void Recycle()
    {
        ReleaseStorage(0);
        _baseChunk = 0;
        _head = 0;
    }

    private byte[] GetOrRent(long chunk)
    {
        long slot = chunk - _baseChunk;
        if (slot >= _ring.Length)
        {
            Grow(slot + 1);
        }

        ref byte[]? entry = ref _ring[(int)((_head + slot) % _ring.Length)];
        if (entry is null)
        {
            entry = StreamChunkPool.Rent(_chunkSize);
            _allocatedChunks++;
            _budget?.OnChunksChanged(_chunkSize, _sendSide);
        }

        return entry;
    }

    private void Grow(long needed)
    {
        if (needed > int.MaxValue / 2)
        {
            throw new InvalidOperationException("stream window too large");
        }

        // From one slot: most streams never span more than one chunk (a request, a small answer, a tiny window).
        int size = Math.Max((int)needed, _ring.Length * 2);
        var ring = new byte[]?[size];
        for (int i = 0; i < _ring.Length; i++)
        {
            ring[i] = _ring[(_head + i) % _ring.Length];
        }

        _ring = ring;
        _head = 0;
    }
}
