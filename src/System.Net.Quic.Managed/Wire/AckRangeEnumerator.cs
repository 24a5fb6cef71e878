namespace System.Net.Quic.Managed.Wire;

/// <summary>Decodes the ranges of an ACK frame on demand, largest first, without allocating. RFC 9000 §19.3.1.
/// Constructed from a validated <see cref="AckFrame"/>; malformed input simply ends the enumeration.</summary>
internal ref struct AckRangeEnumerator
{
    private readonly ulong _largest;
    private readonly ulong _firstRange;
    private QuicReader _reader;
    private bool _started;
    private bool _done;
    private ulong _smallest;

    public AckRangeEnumerator(ulong largestAcknowledged, ulong firstAckRange, ReadOnlySpan<byte> additionalRanges)
    {
        _largest = largestAcknowledged;
        _firstRange = firstAckRange;
        _reader = new QuicReader(additionalRanges);
        _started = false;
        _done = false;
        Current = default;
    }

    public AckRange Current { get; private set; }

    public readonly AckRangeEnumerator GetEnumerator() => this;

    public bool MoveNext()
    {
        if (_done)
        {
            return false;
        }

        if (!_started)
        {
            _started = true;
            if (_firstRange > _largest)
            {
                _done = true;
                return false;
            }

            _smallest = _largest - _firstRange;
            Current = new AckRange((long)_smallest, (long)_largest);
            return true;
        }

        ulong previousSmallest = _smallest;
        if (_reader.IsEmpty || !_reader.TryReadVarInt(out ulong gap) || !_reader.TryReadVarInt(out ulong length) ||
            previousSmallest < 2 || gap > previousSmallest - 2 || length > previousSmallest - 2 - gap)
        {
            _done = true;
            return false;
        }

        ulong largest = previousSmallest - gap - 2;
        _smallest = largest - length;
        Current = new AckRange((long)_smallest, (long)largest);
        return true;
    }
}
