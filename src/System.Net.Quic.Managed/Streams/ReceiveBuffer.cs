using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Reassembly of one stream's incoming data (RFC 9000 §2.2): STREAM frame payloads arrive at any offset, out of order,
/// overlapping or duplicated; each byte is stored once (the first copy wins, later copies are ignored) and the
/// application reads the contiguous prefix. Nothing is stored beyond <see cref="Limit"/> (the flow-control limit we
/// advertised), so memory is bounded by the window, and the number of disjoint fragments is bounded too.
/// Enforces the final-size rules of RFC 9000 §4.5.
/// </summary>
internal sealed class ReceiveBuffer
{
    private readonly StreamChunkBuffer _chunks;
    private readonly RangeSet _received;
    private long _readOffset;
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
        _chunks = new StreamChunkBuffer(chunkSize, budget);
        _received = new RangeSet(4, maxFragments);
    }

    /// <summary>As new (empty, from offset 0, limit <paramref name="limit"/>), for a recycled stream; storage that stayed small is kept.</summary>
    public void Reuse(long limit)
    {
        Limit = limit;
        _chunks.Recycle();
        _received.ReleaseStorage();
        _readOffset = 0;
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
    public long ReadableBytes => ContiguousEnd() - _readOffset;

    /// <summary>Bytes stored: received, not yet read (never more than Limit - ReadOffset).</summary>
    public long BufferedBytes => _received.TotalLength;

    /// <summary>Bytes currently rented from the pool.</summary>
    public long AllocatedBytes => _chunks.AllocatedBytes;

    /// <summary>Number of disjoint received ranges ahead of the read offset.</summary>
    public int FragmentCount => _received.Count;

    /// <summary>Every byte up to the final size has arrived (Data Recvd, RFC 9000 §3.2).</summary>
    public bool IsAllDataReceived => _finalSize >= 0 && (_discarding || ContiguousEnd() == _finalSize);

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
        if (!_discarding && end > start && !_received.ContainsRange(start, end))
        {
            // Keep the existing copy of every byte: only fill the gaps of the received set inside [start, end).
            long pos = start;
            int i = _received.FirstEndingAfter(pos);
            while (pos < end)
            {
                if (i < _received.Count && _received.StartAt(i) <= pos)
                {
                    pos = _received.EndAt(i);
                    i++;
                    continue;
                }

                long gapEnd = i < _received.Count ? Math.Min(end, _received.StartAt(i)) : end;
                _chunks.Write(pos, data.Slice((int)(pos - offset), (int)(gapEnd - pos)));
                pos = gapEnd;
            }

            if (!_received.Add(start, end))
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
        _received.ReleaseStorage();
        _chunks.ReleaseStorage(_highestOffset);
    }

    /// <summary>Copies contiguous data into <paramref name="destination"/>; returns the byte count.</summary>
    public int Read(Span<byte> destination)
    {
        if (_discarding)
        {
            return 0;
        }

        long available = ContiguousEnd() - _readOffset;
        int n = (int)Math.Min(available, destination.Length);
        if (n == 0)
        {
            return 0;
        }

        _chunks.CopyTo(_readOffset, destination.Slice(0, n));
        _readOffset += n;
        _received.RemoveBelow(_readOffset);
        if (_readOffset == _finalSize)
        {
            // Read to the end: nothing more can arrive, so the range set's and the chunk ring's storage go too (a
            // stream whose reading is over but whose sending is not, a request answered slowly, keeps none).
            _received.ReleaseStorage();
            _chunks.ReleaseStorage(_readOffset);
        }
        else if (_received.IsEmpty)
        {
            // Nothing held ahead: return the partly-read chunk too, so an idle or finished stream holds no memory.
            _chunks.ReleaseAll(_readOffset);
        }
        else
        {
            _chunks.ReleaseBefore(_readOffset);
        }

        return n;
    }

    private long ContiguousEnd()
        => _received.Count > 0 && _received.StartAt(0) <= _readOffset ? _received.EndAt(0) : _readOffset;
}
