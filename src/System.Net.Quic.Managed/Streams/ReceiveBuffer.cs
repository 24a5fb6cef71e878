using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Reassembly of one stream's incoming data (RFC 9000 §2.2): STREAM frame payloads arrive at any offset, out of order,
/// overlapping or duplicated; each byte is stored once (the first copy wins, later copies are ignored) and the
/// application reads the contiguous prefix. Nothing is stored beyond <see cref="Limit"/> (the flow-control limit we
/// advertised), so memory is bounded by the window, and the number of disjoint fragments is bounded too.
/// Enforces the final-size rules of RFC 9000 §4.5.
/// <para>
/// The bytes held contiguously from the read offset (all of them, for data that arrives in order) are one pair of
/// offsets; only ranges that arrived ahead of a gap go into a <see cref="RangeSet"/>, created with the first such
/// range: a stream whose data arrives in order holds no range set.
/// </para>
/// </summary>
internal sealed class ReceiveBuffer
{
    // A mutable struct: used through the field only, never copied.
    private StreamChunkBuffer _chunks;
    // Received ranges beyond _contiguousEnd (each starts after it: adjacent data extends the prefix instead).
    private RangeSet? _ahead;
    private readonly int _maxFragments;
    private long _readOffset;
    // [_readOffset, _contiguousEnd) is held and readable.
    private long _contiguousEnd;
    private long _highestOffset;
    private long _finalSize = -1;
    private bool _discarding;

    /// <param name="limit">Initial flow-control limit: no byte at or beyond it is accepted.</param>
    /// <param name="chunkSize">Size of the pooled chunks data is stored in.</param>
    /// <param name="maxFragments">Most disjoint received ranges held ahead of the read offset (RFC 9000 §21.7 reassembly attacks).</param>
    /// <param name="budget">The connection's account the pooled chunks are counted in (null: none).</param>
    public ReceiveBuffer(long limit, int chunkSize = StreamChunkBuffer.DefaultChunkSize, int maxFragments = 4096, ConnectionBufferBudget? budget = null)
    {
        if (limit < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(limit));
        }

        Limit = limit;
        if (maxFragments < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(maxFragments));
        }

        _chunks = new StreamChunkBuffer(chunkSize, budget);
        _maxFragments = maxFragments;
    }

    /// <summary>As new (empty, from offset 0, limit <paramref name="limit"/>), for a recycled stream; storage that stayed small is kept.</summary>
    public void Reuse(long limit)
    {
        Limit = limit;
        _chunks.Recycle();
        _ahead?.ReleaseStorage();
        _readOffset = 0;
        _contiguousEnd = 0;
        _highestOffset = 0;
        _finalSize = -1;
        _discarding = false;
    }

    /// <summary>Bytes at or beyond this offset are a flow-control violation.</summary>
    public long Limit { get; private set; }

    /// <summary>Bytes delivered to the application (or discarded).</summary>
    public long ReadOffset => _readOffset;

    /// <summary>One past the highest byte received so far.</summary>
    public long HighestOffset => _highestOffset;

    /// <summary>The final size once known (FIN or RESET_STREAM), else -1.</summary>
    public long FinalSize => _finalSize;

    public bool IsFinalSizeKnown => _finalSize >= 0;

    /// <summary>Bytes readable right now (contiguous from <see cref="ReadOffset"/>).</summary>
    public long ReadableBytes => _contiguousEnd - _readOffset;

    /// <summary>Bytes stored: received, not yet read (never more than Limit - ReadOffset).</summary>
    public long BufferedBytes => _contiguousEnd - _readOffset + (_ahead?.TotalLength ?? 0);

    /// <summary>Bytes currently rented from the pool.</summary>
    public long AllocatedBytes => _chunks.AllocatedBytes;

    /// <summary>Number of disjoint received ranges ahead of the read offset.</summary>
    public int FragmentCount => (_contiguousEnd > _readOffset ? 1 : 0) + (_ahead?.Count ?? 0);

    /// <summary>Whether ranges ahead of a gap are held (out-of-order data).</summary>
    public bool HasDataAhead => _ahead is { IsEmpty: false };

    /// <summary>Every byte up to the final size has arrived (Data Recvd, RFC 9000 §3.2).</summary>
    public bool IsAllDataReceived => _finalSize >= 0 && (_discarding || _contiguousEnd == _finalSize);

    /// <summary>The application read everything up to the final size: FIN delivered.</summary>
    public bool IsFinished => _finalSize >= 0 && _readOffset == _finalSize;

    public bool IsDiscarding => _discarding;

    /// <summary>Raises the flow-control limit (after advertising a new MAX_STREAM_DATA); never lowers it.</summary>
    public void RaiseLimit(long limit)
    {
        if (limit > Limit)
        {
            Limit = limit;
        }
    }

    /// <summary>
    /// Checks a STREAM frame (or, with empty data and fin, a RESET_STREAM final size) without changing anything.
    /// RFC 9000 §4.5: a final size that changes, data beyond the final size, or a final size below data already
    /// received is FINAL_SIZE_ERROR; RFC 9000 §4.1, §19.8: data beyond the limit is FLOW_CONTROL_ERROR.
    /// </summary>
    public TransportErrorCode Check(long offset, long length, bool fin, out string? reason)
    {
        if (offset < 0 || length < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(offset));
        }

        long end = offset + length;
        if (end > StreamId.MaxValue)
        {
            reason = "stream data beyond 2^62-1";
            return TransportErrorCode.FlowControlError;
        }

        if (_finalSize >= 0)
        {
            if (end > _finalSize)
            {
                reason = "stream data beyond the final size";
                return TransportErrorCode.FinalSizeError;
            }

            if (fin && end != _finalSize)
            {
                reason = "final size changed";
                return TransportErrorCode.FinalSizeError;
            }
        }
        else if (fin && end < _highestOffset)
        {
            reason = "final size below data already received";
            return TransportErrorCode.FinalSizeError;
        }

        if (end > Limit)
        {
            reason = "stream data beyond the flow-control limit";
            return TransportErrorCode.FlowControlError;
        }

        reason = null;
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// Inserts a STREAM frame payload. Bytes already held or already read are ignored; new bytes are copied once.
    /// On error nothing changes. INTERNAL_ERROR if the data is so fragmented that the fragment budget is exhausted.
    /// </summary>
    public TransportErrorCode Insert(long offset, ReadOnlySpan<byte> data, bool fin, out string? reason)
    {
        TransportErrorCode error = Check(offset, data.Length, fin, out reason);
        if (error != TransportErrorCode.NoError)
        {
            return error;
        }

        long end = offset + data.Length;
        long start = Math.Max(offset, _readOffset);
        if (!_discarding && end > start && end > _contiguousEnd && !(_ahead is { } held && held.ContainsRange(Math.Max(start, _contiguousEnd), end)))
        {
            // Keep the existing copy of every byte: only fill the gaps of what is held inside [start, end) (everything
            // below the contiguous end is held).
            long pos = Math.Max(start, _contiguousEnd);
            RangeSet? ahead = _ahead;
            int count = ahead?.Count ?? 0;
            int i = ahead?.FirstEndingAfter(pos) ?? 0;
            while (pos < end)
            {
                if (i < count && ahead!.StartAt(i) <= pos)
                {
                    pos = ahead.EndAt(i);
                    i++;
                    continue;
                }

                long gapEnd = i < count ? Math.Min(end, ahead!.StartAt(i)) : end;
                _chunks.Write(pos, data.Slice((int)(pos - offset), (int)(gapEnd - pos)));
                pos = gapEnd;
            }

            if (!TryAddHeld(start, end))
            {
                reason = "stream data too fragmented";
                return TransportErrorCode.InternalError;
            }
        }

        if (end > _highestOffset)
        {
            _highestOffset = end;
        }

        if (_discarding)
        {
            _readOffset = _highestOffset;
            _contiguousEnd = _highestOffset;
        }

        if (fin)
        {
            _finalSize = end;
        }

        return TransportErrorCode.NoError;
    }

    /// <summary>Records a final size from RESET_STREAM after <see cref="Check"/> accepted it, and drops all data.</summary>
    public void ResetTo(long finalSize)
    {
        if (_finalSize >= 0 && finalSize != _finalSize)
        {
            throw new InvalidOperationException("final size changed; call Check first");
        }

        _finalSize = finalSize;
        if (finalSize > _highestOffset)
        {
            _highestOffset = finalSize;
        }

        Discard();
    }

    /// <summary>
    /// Drops buffered data and ignores future data (still checking final size). The read offset jumps to the highest
    /// offset received and later data moves it along, so the owner can keep releasing flow-control credit.
    /// </summary>
    public void Discard()
    {
        _discarding = true;
        _readOffset = _highestOffset;
        _contiguousEnd = _highestOffset;
        _ahead?.ReleaseStorage();
        _chunks.ReleaseStorage(_highestOffset);
    }

    /// <summary>Copies contiguous data into <paramref name="destination"/>; returns the byte count.</summary>
    public int Read(Span<byte> destination)
    {
        if (_discarding)
        {
            return 0;
        }

        long available = _contiguousEnd - _readOffset;
        int n = (int)Math.Min(available, destination.Length);
        if (n == 0)
        {
            return 0;
        }

        _chunks.CopyTo(_readOffset, destination.Slice(0, n));
        _readOffset += n;
        ReleaseRead();
        return n;
    }

    /// <summary>After the read offset moved (a read or a taken chunk): the storage below it goes back.</summary>
    private void ReleaseRead()
    {
        if (_readOffset == _finalSize)
        {
            // Read to the end: nothing more can arrive, so the chunks go, and the storage of a range set or a chunk
            // ring that grew large (a stream whose reading is over but whose sending is not, a request answered slowly,
            // keeps at most a one-chunk ring).
            _ahead?.ReleaseStorage();
            _chunks.ReleaseStorage(_readOffset);
        }
        else if (_readOffset == _contiguousEnd && !HasDataAhead)
        {
            // Nothing held ahead: return the partly-read chunk too, so an idle or finished stream holds no memory.
            _chunks.ReleaseAll(_readOffset);
        }
        else
        {
            _chunks.ReleaseBefore(_readOffset);
        }
    }

    /// <summary>
    /// Takes the chunk holding the read offset out of the buffer without copying, when every byte from the read offset
    /// to the chunk's end has arrived (nothing is written below the contiguous end again): <paramref name="chunk"/>
    /// holds <paramref name="length"/> readable bytes at <paramref name="start"/> and is the caller's (to give back to
    /// <see cref="StreamChunkPool"/>). False when that chunk is still being filled, or nothing is readable.
    /// </summary>
    public bool TryTakeChunk(out byte[]? chunk, out int start, out int length)
    {
        chunk = null;
        start = length = 0;
        int size = _chunks.ChunkSize;
        long chunkStart = _readOffset - (_readOffset % size);
        long chunkEnd = chunkStart + size;
        if (_discarding || chunkEnd > _contiguousEnd)
        {
            return false;
        }

        chunk = _chunks.TakeChunkAt(_readOffset);
        start = (int)(_readOffset - chunkStart);
        length = size - start;
        _readOffset = chunkEnd;
        ReleaseRead();
        return true;
    }

    /// <summary>
    /// Records [start, end) (start at or above the read offset) as held, with the fragment bound of the whole (the
    /// contiguous prefix counts as one range): false, nothing changed, when a new disjoint range would exceed it.
    /// </summary>
    private bool TryAddHeld(long start, long end)
    {
        RangeSet? ahead = _ahead;
        int aheadCount = ahead?.Count ?? 0;
        if (start <= _contiguousEnd)
        {
            // Extends the contiguous prefix, absorbing the ranges ahead it now reaches. Into an empty prefix that
            // reaches none, it is a new range like any other.
            if (_contiguousEnd == _readOffset && aheadCount >= _maxFragments && ahead!.StartAt(0) > end)
            {
                return false;
            }

            _contiguousEnd = end;
            if (aheadCount > 0)
            {
                int next = ahead!.FirstEndingAfter(end);
                if (next < aheadCount && ahead.StartAt(next) <= end)
                {
                    _contiguousEnd = ahead.EndAt(next);
                }

                ahead.RemoveBelow(_contiguousEnd);
            }

            return true;
        }

        // Ahead of a gap: a new range unless it touches one held ahead.
        int first = ahead?.FirstEndingAfter(start - 1) ?? 0;
        bool isNew = first == aheadCount || ahead!.StartAt(first) > end;
        if (isNew && aheadCount + (_contiguousEnd > _readOffset ? 1 : 0) >= _maxFragments)
        {
            return false;
        }

        return (_ahead ??= RangeSet.Bounded(_maxFragments)).Add(start, end);
    }
}
