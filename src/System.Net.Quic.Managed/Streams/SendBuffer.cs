namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// Outgoing data of one stream (RFC 9000 §2.2, §13.3). The application appends bytes (copied into pooled chunks, up
/// to <see cref="MaxBufferedBytes"/> unacknowledged bytes); the connection takes ranges to put in STREAM frames — lost
/// ranges first, then new data within the flow-control limit — and reports each frame acknowledged or lost. Only the
/// lost ranges are requeued; memory is released as the acknowledged prefix advances.
/// <para>
/// The acknowledged and lost range sets are created with their first range: acknowledgments that arrive in order only
/// move the acknowledged prefix, so a stream never acknowledged out of order and never losing a frame holds neither.
/// </para>
/// </summary>
internal sealed class SendBuffer
{
    // A mutable struct: used through the field only, never copied.
    private StreamChunkBuffer _chunks;
    // Acknowledged ranges above the prefix (out-of-order acknowledgments), and ranges to retransmit; null until used.
    private RangeSet? _acked;
    private RangeSet? _lost;
    private readonly int _maxRanges;
    private long _writeOffset;
    private long _nextNewOffset;
    private long _ackedPrefix;
    private bool _finRequested;
    private bool _finSent;
    private bool _finAcked;
    private bool _finLost;
    private bool _reset;

    /// <param name="maxBufferedBytes">Most unacknowledged bytes held.</param>
    /// <param name="chunkSize">Size of the pooled chunks.</param>
    /// <param name="maxRanges">Most disjoint acknowledged or lost ranges tracked.</param>
    /// <param name="budget">The connection's account the chunks are counted in, as held send bytes (null: none).</param>
    public SendBuffer(long maxBufferedBytes, int chunkSize = StreamChunkBuffer.DefaultChunkSize, int maxRanges = 1 << 16,
        ConnectionBufferBudget? budget = null)
    {
        if (maxBufferedBytes < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(maxBufferedBytes));
        }

        MaxBufferedBytes = maxBufferedBytes;
        if (maxRanges < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(maxRanges));
        }

        _chunks = new StreamChunkBuffer(chunkSize, budget, sendSide: true);
        _maxRanges = maxRanges;
    }

    /// <summary>As new (empty, from offset 0), for a recycled stream; storage that stayed small is kept.</summary>
    public void Reuse(long maxBufferedBytes)
    {
        MaxBufferedBytes = maxBufferedBytes;
        _chunks.Recycle();
        _acked?.ReleaseStorage();
        _lost?.ReleaseStorage();
        _writeOffset = 0;
        _nextNewOffset = 0;
        _ackedPrefix = 0;
        _finRequested = false;
        _finSent = false;
        _finAcked = false;
        _finLost = false;
        _reset = false;
    }

    /// <summary>Most bytes held at once (appended but not yet acknowledged).</summary>
    public long MaxBufferedBytes { get; set; }

    /// <summary>Total bytes ever appended: the offset the next appended byte gets.</summary>
    public long WriteOffset => _writeOffset;

    /// <summary>One past the highest offset ever sent: the stream-level flow-control credit consumed (RFC 9000 §4.5).</summary>
    public long MaxSentOffset => _nextNewOffset;

    /// <summary>Every byte below this offset has been acknowledged and released.</summary>
    public long AckedOffset => _ackedPrefix;

    /// <summary>Bytes held: appended and not yet covered by the acknowledged prefix.</summary>
    public long BufferedBytes => _writeOffset - _ackedPrefix;

    /// <summary>Bytes the application may still append before hitting <see cref="MaxBufferedBytes"/>.</summary>
    public long WritableBytes => _reset || _finRequested ? 0 : Math.Max(0, MaxBufferedBytes - BufferedBytes);

    /// <summary>Bytes sent and not acknowledged (including lost bytes awaiting retransmission).</summary>
    public long UnackedBytes => _nextNewOffset - _ackedPrefix - AckedAbovePrefix();

    /// <summary>Bytes currently rented from the pool.</summary>
    public long AllocatedBytes => _chunks.AllocatedBytes;

    /// <summary>The final size once the application finished the stream, else -1.</summary>
    public long FinalSize => _finRequested ? _writeOffset : -1;

    public bool IsFinRequested => _finRequested;

    public bool IsFinSent => _finSent;

    public bool IsReset => _reset;

    /// <summary>Every byte and the FIN acknowledged: the sending part may enter Data Recvd. RFC 9000 §3.1.</summary>
    public bool IsAllDataAcked => _finRequested && _finAcked && _ackedPrefix == _writeOffset && !_reset;

    /// <summary>Lost bytes or a lost FIN wait for retransmission (not subject to flow control).</summary>
    public bool HasRetransmission => !_reset && (_lost is { IsEmpty: false } || _finLost);

    /// <summary>Bytes or a FIN never sent yet.</summary>
    public bool HasNewData => !_reset && (_nextNewOffset < _writeOffset || (_finRequested && !_finSent));

    /// <summary>Number of disjoint lost ranges awaiting retransmission.</summary>
    public int LostRangeCount => _lost?.Count ?? 0;

    /// <summary>
    /// Appends application data; copies as much as fits under <see cref="MaxBufferedBytes"/> and returns the count.
    /// FIN is recorded only if all of <paramref name="data"/> was accepted.
    /// </summary>
    public int Append(ReadOnlySpan<byte> data, bool fin)
    {
        if (_reset)
        {
            throw new InvalidOperationException("stream was reset");
        }

        if (_finRequested)
        {
            if (data.IsEmpty && fin)
            {
                return 0;
            }

            throw new InvalidOperationException("stream already finished");
        }

        long room = Math.Max(0, MaxBufferedBytes - BufferedBytes);
        int n = (int)Math.Min(data.Length, room);
        if (_writeOffset + n > StreamId.MaxValue)
        {
            throw new InvalidOperationException("stream offset would exceed 2^62-1");
        }

        _chunks.Write(_writeOffset, data.Slice(0, n));
        _writeOffset += n;
        if (fin && n == data.Length)
        {
            _finRequested = true;
        }

        return n;
    }

    /// <summary>
    /// The next range to send without consuming it: the first lost range, else new data up to
    /// <paramref name="flowLimitOffset"/> (the smaller of the stream and connection limits as an absolute offset).
    /// A zero-length result with <paramref name="fin"/> set is a FIN-only frame.
    /// </summary>
    public bool TryPeekNextToSend(long flowLimitOffset, out long offset, out long length, out bool fin)
    {
        offset = 0;
        length = 0;
        fin = false;
        if (_reset)
        {
            return false;
        }

        if (_lost is { IsEmpty: false } lost)
        {
            offset = lost.StartAt(0);
            long end = lost.EndAt(0);
            length = end - offset;
            fin = _finRequested && end == _writeOffset && (_finLost || !_finSent);
            return true;
        }

        if (_finLost)
        {
            offset = _writeOffset;
            fin = true;
            return true;
        }

        if (_nextNewOffset < _writeOffset)
        {
            long end = Math.Min(_writeOffset, flowLimitOffset);
            if (end <= _nextNewOffset)
            {
                return false;
            }

            offset = _nextNewOffset;
            length = end - offset;
            fin = _finRequested && end == _writeOffset && !_finSent;
            return true;
        }

        if (_finRequested && !_finSent)
        {
            offset = _writeOffset;
            fin = true;
            return true;
        }

        return false;
    }

    /// <summary>
    /// Copies the next range (as <see cref="TryPeekNextToSend"/> reports it, truncated to the destination) straight into
    /// <paramref name="destination"/> (the packet buffer) and records it as sent.
    /// </summary>
    public bool TryTakeNextToSend(Span<byte> destination, long flowLimitOffset, out long offset, out int length, out bool fin)
    {
        length = 0;
        if (!TryPeekNextToSend(flowLimitOffset, out offset, out long available, out fin))
        {
            return false;
        }

        int n = (int)Math.Min(available, destination.Length);
        if (n < available)
        {
            fin = false;
            if (n == 0)
            {
                return false;
            }
        }

        _chunks.CopyTo(offset, destination.Slice(0, n));
        length = n;
        MarkSent(offset, n, fin);
        return true;
    }

    /// <summary>
    /// Zero-copy variant: the next range limited to one pooled chunk and <paramref name="maxLength"/>, recorded as sent.
    /// The span is valid until the next call that acknowledges or resets.
    /// </summary>
    public bool TryGetNextToSend(int maxLength, long flowLimitOffset, out long offset, out ReadOnlySpan<byte> data, out bool fin)
    {
        data = default;
        if (!TryPeekNextToSend(flowLimitOffset, out offset, out long available, out fin))
        {
            return false;
        }

        int n = (int)Math.Min(available, maxLength);
        if (n > 0)
        {
            data = _chunks.GetSpan(offset, n);
            n = data.Length;
        }

        if (n < available)
        {
            fin = false;
            if (n == 0)
            {
                return false;
            }
        }

        MarkSent(offset, n, fin);
        return true;
    }

    /// <summary>
    /// Records that the STREAM frame [offset, offset+length) (+FIN) was acknowledged. Returns false only if the
    /// acknowledged-range set is full (more than its range budget of disjoint acknowledged fragments).
    /// </summary>
    public bool OnAcked(long offset, long length, bool fin)
    {
        if (_reset)
        {
            return true;
        }

        long end = Math.Min(offset + length, _nextNewOffset);
        if (offset < _ackedPrefix)
        {
            offset = _ackedPrefix;
        }

        bool ok = true;
        if (end > offset)
        {
            bool advanced = false;
            if (offset == _ackedPrefix && (_acked is null || _acked.IsEmpty))
            {
                // In order: the prefix moves, no range to record.
                _ackedPrefix = end;
                advanced = true;
            }
            else
            {
                RangeSet acked = _acked ??= RangeSet.Bounded(_maxRanges);
                ok = acked.Add(offset, end);
                if (acked.Count > 0 && acked.StartAt(0) <= _ackedPrefix)
                {
                    _ackedPrefix = acked.EndAt(0);
                    acked.RemoveBelow(_ackedPrefix);
                    advanced = true;
                }
            }

            _lost?.Remove(offset, end);
            if (advanced)
            {
                _lost?.RemoveBelow(_ackedPrefix);
                if (_ackedPrefix == _writeOffset)
                {
                    // Everything written is acknowledged: return the partly-used chunk too, so an idle stream holds no memory.
                    _chunks.ReleaseAll(_writeOffset);
                }
                else
                {
                    _chunks.ReleaseBefore(_ackedPrefix);
                }
            }
        }

        if (fin && _finSent)
        {
            _finAcked = true;
            _finLost = false;
        }

        if (IsAllDataAcked)
        {
            // Everything, FIN included, acknowledged: the side is done; its sets' storage and chunk ring go too.
            _acked?.ReleaseStorage();
            _lost?.ReleaseStorage();
            _chunks.ReleaseStorage(_writeOffset);
        }

        return ok;
    }

    /// <summary>
    /// Records that the STREAM frame [offset, offset+length) (+FIN) was declared lost: only its still-unacknowledged
    /// bytes are queued for retransmission. Returns false if the lost-range set is full.
    /// </summary>
    public bool OnLost(long offset, long length, bool fin)
    {
        if (_reset)
        {
            return true;
        }

        long end = Math.Min(offset + length, _nextNewOffset);
        long pos = Math.Max(offset, _ackedPrefix);
        bool ok = true;
        RangeSet? acked = _acked;
        int count = acked?.Count ?? 0;
        int i = acked?.FirstEndingAfter(pos) ?? 0;
        while (pos < end)
        {
            if (i < count && acked!.StartAt(i) <= pos)
            {
                pos = acked.EndAt(i);
                i++;
                continue;
            }

            long gapEnd = i < count ? Math.Min(end, acked!.StartAt(i)) : end;
            ok &= (_lost ??= RangeSet.Bounded(_maxRanges)).Add(pos, gapEnd);
            pos = gapEnd;
        }

        if (fin && _finSent && !_finAcked)
        {
            _finLost = true;
        }

        return ok;
    }

    /// <summary>Discards all buffered data (RESET_STREAM sent, RFC 9000 §3.1); later acks and losses are ignored.</summary>
    public void Reset()
    {
        _reset = true;
        _acked?.ReleaseStorage();
        _lost?.ReleaseStorage();
        _finLost = false;
        _chunks.ReleaseStorage(_writeOffset);
    }

    private void MarkSent(long offset, int length, bool fin)
    {
        long end = offset + length;
        if (length > 0)
        {
            // Taken from the start of the first lost range, or new data: neither can split a range.
            _lost?.Remove(offset, end);
        }

        if (end > _nextNewOffset)
        {
            _nextNewOffset = end;
        }

        if (fin)
        {
            _finSent = true;
            _finLost = false;
        }
    }

    private long AckedAbovePrefix()
    {
        return _acked?.TotalLength ?? 0;
    }
}
