namespace QuicManaged.Http.Qpack;

/// <summary>
/// The decoder's copy of the peer encoder's QPACK dynamic table (RFC 9204 §3.2): a FIFO of field lines addressed by
/// absolute index (0 = first entry ever inserted), evicted oldest first to stay within the current capacity. The
/// capacity never exceeds the maximum this endpoint advertised, so the table's memory is bounded by it: at most
/// <see cref="MaxEntries"/> entries whose name and value lengths sum to less than the capacity.
/// Not thread-safe; <see cref="QpackDecoderSession"/> serializes access.
/// </summary>
internal sealed class QpackDynamicTable
{
    private readonly HeaderField[] _ring;
    private long _capacity;
    private long _size;
    private long _insertCount;
    private long _droppedCount;

    public QpackDynamicTable(long maxCapacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxCapacity);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxCapacity, 1L << 30);
        MaxCapacity = maxCapacity;
        // Every entry is at least 32 bytes (RFC 9204 §3.2.1), so capacity / 32 entries can ever be live at once.
        _ring = new HeaderField[Math.Max(1, MaxEntries)];
    }

    /// <summary>SETTINGS_QPACK_MAX_TABLE_CAPACITY as this endpoint advertised it.</summary>
    public long MaxCapacity { get; }

    /// <summary>RFC 9204 §4.5.1.1: MaxEntries = floor(MaxTableCapacity / 32).</summary>
    public long MaxEntries => MaxCapacity / 32;

    /// <summary>The capacity the encoder set (Set Dynamic Table Capacity); 0 until it sets one.</summary>
    public long Capacity => _capacity;

    /// <summary>Sum of the entries' sizes (name + value + 32 each).</summary>
    public long Size => _size;

    /// <summary>Total number of insertions so far (the Insert Count).</summary>
    public long InsertCount => _insertCount;

    /// <summary>Absolute index of the oldest live entry (how many were evicted).</summary>
    public long DroppedCount => _droppedCount;

    /// <summary>Number of live entries.</summary>
    public long Count => _insertCount - _droppedCount;

    /// <summary>RFC 9204 §4.3.1: false when the capacity exceeds the advertised maximum (QPACK_ENCODER_STREAM_ERROR).</summary>
    public bool TrySetCapacity(long capacity)
    {
        if (capacity < 0 || capacity > MaxCapacity)
        {
            return false;
        }

        _capacity = capacity;
        EvictTo(capacity);
        return true;
    }

    /// <summary>RFC 9204 §3.2.2: evicts as needed; false when the entry alone exceeds the capacity (QPACK_ENCODER_STREAM_ERROR).</summary>
    public bool TryInsert(HeaderField field)
    {
        long entrySize = field.Size;
        if (entrySize > _capacity)
        {
            return false;
        }

        EvictTo(_capacity - entrySize);
        _ring[_insertCount % _ring.Length] = field;
        _insertCount++;
        _size += entrySize;
        return true;
    }

    /// <summary>The live entry with <paramref name="absoluteIndex"/>; false when it was evicted or not yet inserted.</summary>
    public bool TryGet(long absoluteIndex, out HeaderField field)
    {
        if (absoluteIndex < _droppedCount || absoluteIndex >= _insertCount)
        {
            field = default;
            return false;
        }

        field = _ring[absoluteIndex % _ring.Length];
        return true;
    }

    /// <summary>RFC 9204 §3.2.5: on the encoder stream, relative index 0 is the most recently inserted entry.</summary>
    public bool TryGetByEncoderRelativeIndex(ulong relativeIndex, out HeaderField field)
    {
        if (relativeIndex >= (ulong)Count)
        {
            field = default;
            return false;
        }

        return TryGet(_insertCount - 1 - (long)relativeIndex, out field);
    }

    private void EvictTo(long targetSize)
    {
        while (_size > targetSize && _droppedCount < _insertCount)
        {
            long slot = _droppedCount % _ring.Length;
            _size -= _ring[slot].Size;
            _ring[slot] = default;
            _droppedCount++;
        }
    }
}
