using QuicManaged.Http.Framing;

namespace QuicManaged.Http.Qpack;

/// <summary>
/// The decoding half of QPACK for one HTTP/3 connection with a dynamic table (RFC 9204 §2.2): the table, the peer's
/// encoder stream applied to it, field sections decoded against it (blocking a stream until its Required Insert Count
/// is reached, at most <see cref="MaxBlockedStreams"/> at once), and the decoder-stream instructions this endpoint owes
/// the peer (§4.4: Section Acknowledgment, Stream Cancellation, Insert Count Increment), queued in order and taken by
/// whoever writes the decoder stream. Thread-safe. Violations throw <see cref="Http3ProtocolException"/> with the
/// RFC 9204 connection error code.
/// </summary>
internal sealed class QpackDecoderSession
{
    private readonly Lock _lock = new();
    private readonly QpackDynamicTable _table;
    private readonly QpackEncoderStreamParser _parser;
    private readonly List<Waiter> _blocked = new();
    private byte[] _pending = new byte[64];
    private int _pendingLength;
    private long _knownReceivedCount;
    private Exception? _failure;

    public QpackDecoderSession(long maxTableCapacity, int maxBlockedStreams)
    {
        _table = new QpackDynamicTable(maxTableCapacity);
        _parser = new QpackEncoderStreamParser(_table);
        MaxBlockedStreams = maxBlockedStreams;
    }

    /// <summary>SETTINGS_QPACK_MAX_TABLE_CAPACITY this endpoint advertises.</summary>
    public long MaxTableCapacity => _table.MaxCapacity;

    /// <summary>SETTINGS_QPACK_BLOCKED_STREAMS this endpoint advertises.</summary>
    public int MaxBlockedStreams { get; }

    /// <summary>Raised (outside the lock) when decoder-stream instructions were queued; see <see cref="TakeDecoderInstructions"/>.</summary>
    public event Action? DecoderInstructionsQueued;

    /// <summary>The table (for tests; read it only when nothing else uses the session).</summary>
    internal QpackDynamicTable Table => _table;

    /// <summary>Encoder-stream bytes received.</summary>
    public long EncoderStreamBytes
    {
        get
        {
            lock (_lock)
            {
                return _parser.BytesReceived;
            }
        }
    }

    /// <summary>Entries the peer's encoder inserted.</summary>
    public long InsertCount
    {
        get
        {
            lock (_lock)
            {
                return _table.InsertCount;
            }
        }
    }

    /// <summary>True when <see cref="TakeDecoderInstructions"/> would return bytes.</summary>
    public bool HasDecoderInstructions
    {
        get
        {
            lock (_lock)
            {
                return _pendingLength > 0 || _table.InsertCount > _knownReceivedCount;
            }
        }
    }

    /// <summary>Streams currently blocked on inserts.</summary>
    public int BlockedStreams
    {
        get
        {
            lock (_lock)
            {
                return _blocked.Count;
            }
        }
    }

    /// <summary>Applies encoder-stream bytes; unblocks streams whose Required Insert Count is now reached.</summary>
    /// <exception cref="Http3ProtocolException">QPACK_ENCODER_STREAM_ERROR.</exception>
    public void OnEncoderStreamData(ReadOnlySpan<byte> data)
    {
        List<Waiter>? ready = null;
        bool queued;
        lock (_lock)
        {
            if (!_parser.Process(data, out string? reason))
            {
                throw new Http3ProtocolException(Http3ErrorCode.QpackEncoderStreamError, reason ?? "invalid encoder instruction");
            }

            for (int i = _blocked.Count - 1; i >= 0; i--)
            {
                if (_blocked[i].RequiredInsertCount <= _table.InsertCount)
                {
                    (ready ??= new()).Add(_blocked[i]);
                    _blocked.RemoveAt(i);
                }
            }

            queued = _table.InsertCount > _knownReceivedCount;
        }

        if (ready is not null)
        {
            foreach (Waiter waiter in ready)
            {
                waiter.Completion.TrySetResult();
            }
        }

        if (queued)
        {
            DecoderInstructionsQueued?.Invoke();
        }
    }

    /// <summary>Decodes a field section held in an array (see the overload on memory).</summary>
    public ValueTask<List<HeaderField>> DecodeAsync(byte[] section, long streamId, long maxFieldSectionSize, CancellationToken cancellationToken)
        => DecodeAsync(section.AsMemory(), streamId, maxFieldSectionSize, cancellationToken, null);

    /// <summary>
    /// Decodes the field section of a HEADERS frame on <paramref name="streamId"/>, first waiting (blocked) until the
    /// table holds its Required Insert Count. Canceling a blocked wait sends Stream Cancellation. The fields are appended
    /// to <paramref name="into"/> when given (the caller's reusable list), else to a new list. <paramref name="section"/>
    /// must stay unchanged until the returned task completes.
    /// </summary>
    /// <exception cref="Http3ProtocolException">QPACK_DECOMPRESSION_FAILED (or H3_EXCESSIVE_LOAD for the size limit).</exception>
    public async ValueTask<List<HeaderField>> DecodeAsync(ReadOnlyMemory<byte> section, long streamId, long maxFieldSectionSize, CancellationToken cancellationToken,
        List<HeaderField>? into = null)
    {
        Waiter? waiter = null;
        long insertsAtArrival;
        long requiredInsertCount;
        lock (_lock)
        {
            ThrowIfFailed();
            insertsAtArrival = _table.InsertCount;
            Http3ErrorCode error = QpackDecoder.ReadPrefix(section.Span, _table.MaxEntries, insertsAtArrival, out requiredInsertCount, out _, out _, out string? reason);
            if (error != Http3ErrorCode.NoError)
            {
                throw new Http3ProtocolException(error, reason ?? "invalid field section prefix");
            }

            if (requiredInsertCount > insertsAtArrival)
            {
                // §2.1.2: more blocked streams than advertised is QPACK_DECOMPRESSION_FAILED.
                if (_blocked.Count >= MaxBlockedStreams)
                {
                    throw new Http3ProtocolException(Http3ErrorCode.QpackDecompressionFailed,
                        $"more than SETTINGS_QPACK_BLOCKED_STREAMS ({MaxBlockedStreams}) streams blocked");
                }

                waiter = new Waiter(requiredInsertCount);
                _blocked.Add(waiter);
            }
        }

        if (waiter is not null)
        {
            try
            {
                await waiter.Completion.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                CancelStream(streamId, waiter);
                throw;
            }
        }

        List<HeaderField> fields = into ?? new();
        bool queued = false;
        lock (_lock)
        {
            ThrowIfFailed();
            Http3ErrorCode error = QpackDecoder.Decode(section.Span, maxFieldSectionSize, fields, _table, insertsAtArrival, out string? reason);
            if (error != Http3ErrorCode.NoError)
            {
                throw new Http3ProtocolException(error, reason ?? "field section rejected");
            }

            if (requiredInsertCount > 0)
            {
                // §4.4.1: a section that referenced the dynamic table is acknowledged; it also acknowledges the inserts
                // up to its Required Insert Count (§2.1.4).
                Append(0x80, 7, streamId);
                _knownReceivedCount = Math.Max(_knownReceivedCount, requiredInsertCount);
                queued = true;
            }
        }

        if (queued)
        {
            DecoderInstructionsQueued?.Invoke();
        }

        return fields;
    }

    /// <summary>§4.4.2: the stream was reset or its reading abandoned before all its field sections were decoded.</summary>
    public void CancelStream(long streamId) => CancelStream(streamId, null);

    private void CancelStream(long streamId, Waiter? waiter)
    {
        lock (_lock)
        {
            if (waiter is not null)
            {
                _blocked.Remove(waiter);
            }

            if (_failure is not null || _table.MaxCapacity == 0)
            {
                return;
            }

            Append(0x40, 6, streamId);
        }

        DecoderInstructionsQueued?.Invoke();
    }

    /// <summary>
    /// The decoder-stream bytes owed so far, in order, ending with an Insert Count Increment for inserts not yet
    /// acknowledged (§4.4.3); null when there is nothing to send.
    /// </summary>
    public byte[]? TakeDecoderInstructions()
    {
        lock (_lock)
        {
            if (_table.InsertCount > _knownReceivedCount)
            {
                Append(0x00, 6, _table.InsertCount - _knownReceivedCount);
                _knownReceivedCount = _table.InsertCount;
            }

            if (_pendingLength == 0)
            {
                return null;
            }

            byte[] bytes = _pending.AsSpan(0, _pendingLength).ToArray();
            _pendingLength = 0;
            return bytes;
        }
    }

    /// <summary>The connection is gone: blocked streams fail with <paramref name="reason"/>.</summary>
    public void Fail(Exception reason)
    {
        List<Waiter> blocked;
        lock (_lock)
        {
            _failure ??= reason;
            blocked = new(_blocked);
            _blocked.Clear();
        }

        foreach (Waiter waiter in blocked)
        {
            waiter.Completion.TrySetException(new IOException("The HTTP/3 connection failed: " + reason.Message, reason));
        }
    }

    private void ThrowIfFailed()
    {
        if (_failure is not null)
        {
            throw new IOException("The HTTP/3 connection failed: " + _failure.Message, _failure);
        }
    }

    private void Append(byte flags, int prefixBits, long value)
    {
        if (_pending.Length - _pendingLength < 16)
        {
            Array.Resize(ref _pending, _pending.Length * 2);
        }

        _pendingLength += PrefixedInteger.Encode((ulong)value, prefixBits, flags, _pending.AsSpan(_pendingLength));
    }

    private sealed class Waiter(long requiredInsertCount)
    {
        public long RequiredInsertCount { get; } = requiredInsertCount;

        public TaskCompletionSource Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
