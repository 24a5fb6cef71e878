namespace System.Net.Quic.Managed.Streams;

/// <summary>
/// A sorted set of disjoint, non-adjacent half-open ranges [start, end) of non-negative longs. Used for received stream
/// data, acknowledged and lost send ranges, and reusable for ACK ranges. Storage is allocated with the first range,
/// grows by doubling up to <see cref="MaxCount"/> ranges and is never shrunk, so it is allocation-free in steady
/// state; an operation that would need more than <see cref="MaxCount"/> ranges fails and leaves the set unchanged.
/// </summary>
internal sealed class RangeSet
{
    private long[] _starts = [];
    private long[] _ends = [];
    private int _count;
    private readonly int _initialCapacity;

    public RangeSet(int initialCapacity = 4, int maxCount = 1 << 16)
    {
        if (initialCapacity < 1 || maxCount < 1 || initialCapacity > maxCount)
        {
            throw new ArgumentOutOfRangeException(nameof(initialCapacity));
        }

        // Storage comes with the first range: every stream has several sets (received, acknowledged, lost) and many
        // streams end with some of them never used (lost ranges, mostly), one pair of arrays less each.
        _initialCapacity = initialCapacity;
        MaxCount = maxCount;
    }

    /// <summary>A set of at most <paramref name="maxCount"/> ranges whose storage starts at four ranges (fewer if the bound is lower).</summary>
    public static RangeSet Bounded(int maxCount) => new(Math.Min(4, maxCount), maxCount);

    /// <summary>Number of disjoint ranges.</summary>
    public int Count => _count;

    /// <summary>The most ranges the set will hold.</summary>
    public int MaxCount { get; }

    public bool IsEmpty => _count == 0;

    /// <summary>Start (inclusive) of the <paramref name="index"/>-th range in ascending order.</summary>
    public long StartAt(int index) => (uint)index < (uint)_count ? _starts[index] : throw new ArgumentOutOfRangeException(nameof(index));

    /// <summary>End (exclusive) of the <paramref name="index"/>-th range in ascending order.</summary>
    public long EndAt(int index) => (uint)index < (uint)_count ? _ends[index] : throw new ArgumentOutOfRangeException(nameof(index));

    /// <summary>Smallest value in the set; the set must not be empty.</summary>
    public long Min => _count > 0 ? _starts[0] : throw new InvalidOperationException("empty");

    /// <summary>One past the largest value in the set; the set must not be empty.</summary>
    public long Max => _count > 0 ? _ends[_count - 1] : throw new InvalidOperationException("empty");

    /// <summary>Total number of values covered.</summary>
    public long TotalLength
    {
        get
        {
            long total = 0;
            for (int i = 0; i < _count; i++)
            {
                total += _ends[i] - _starts[i];
            }

            return total;
        }
    }

    public void Clear() => _count = 0;

    /// <summary>
    /// Empties the set and gives its storage back (it comes again with the next range): for a set done with. Storage of
    /// at most <see cref="KeptCapacity"/> ranges stays, so a set that never grew beyond it (most of a stream's) is reused
    /// without allocating when its stream is recycled.
    /// </summary>
    public void ReleaseStorage()
    {
        _count = 0;
        if (_starts.Length <= KeptCapacity) return;
        _starts = [];
        _ends = [];
    }

    /// <summary>The most ranges whose storage <see cref="ReleaseStorage"/> keeps (two arrays of 8 longs).</summary>
    public const int KeptCapacity = 8;

    public bool Contains(long value)
    {
        int i = FirstEndingAfter(value);
        return i < _count && _starts[i] <= value;
    }

    /// <summary>Whether every value of [start, end) is in the set (true for an empty range).</summary>
    public bool ContainsRange(long start, long end)
    {
        if (end <= start)
        {
            return true;
        }

        int i = FirstEndingAfter(start);
        return i < _count && _starts[i] <= start && _ends[i] >= end;
    }

    /// <summary>Whether any value of [start, end) is in the set.</summary>
    public bool Overlaps(long start, long end)
    {
        if (end <= start)
        {
            return false;
        }

        int i = FirstEndingAfter(start);
        return i < _count && _starts[i] < end;
    }

    /// <summary>Index of the first range whose end is greater than <paramref name="value"/> (Count if none).</summary>
    public int FirstEndingAfter(long value)
    {
        int lo = 0, hi = _count;
        while (lo < hi)
        {
            int mid = (int)((uint)(lo + hi) >> 1);
            if (_ends[mid] <= value)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }

        return lo;
    }

    /// <summary>Adds [start, end), merging overlapping and adjacent ranges. False if that would exceed MaxCount.</summary>
    public bool Add(long start, long end)
    {
        if (start < 0 || end < start)
        {
            throw new ArgumentOutOfRangeException(nameof(start));
        }

        if (end == start)
        {
            return true;
        }

        // First range that touches or follows [start, end): its end >= start (adjacency merges too).
        int first = FirstEndingAfter(start - 1);
        int last = first;
        while (last < _count && _starts[last] <= end)
        {
            last++;
        }

        // Ranges [first, last) overlap or are adjacent to [start, end).
        int merged = last - first;
        if (merged == 0)
        {
            if (!EnsureCapacity(_count + 1))
            {
                return false;
            }

            Array.Copy(_starts, first, _starts, first + 1, _count - first);
            Array.Copy(_ends, first, _ends, first + 1, _count - first);
            _starts[first] = start;
            _ends[first] = end;
            _count++;
            return true;
        }

        long newStart = Math.Min(start, _starts[first]);
        long newEnd = Math.Max(end, _ends[last - 1]);
        _starts[first] = newStart;
        _ends[first] = newEnd;
        if (merged > 1)
        {
            Array.Copy(_starts, last, _starts, first + 1, _count - last);
            Array.Copy(_ends, last, _ends, first + 1, _count - last);
            _count -= merged - 1;
        }

        return true;
    }

    /// <summary>Removes [start, end). False (set unchanged) if splitting a range would exceed MaxCount.</summary>
    public bool Remove(long start, long end)
    {
        if (end <= start || _count == 0)
        {
            return true;
        }

        int first = FirstEndingAfter(start);
        if (first == _count || _starts[first] >= end)
        {
            return true;
        }

        // Removing from the middle of one range splits it in two.
        if (_starts[first] < start && _ends[first] > end)
        {
            if (!EnsureCapacity(_count + 1))
            {
                return false;
            }

            Array.Copy(_starts, first + 1, _starts, first + 2, _count - first - 1);
            Array.Copy(_ends, first + 1, _ends, first + 2, _count - first - 1);
            _starts[first + 1] = end;
            _ends[first + 1] = _ends[first];
            _ends[first] = start;
            _count++;
            return true;
        }

        int keepFrom = first;
        if (_starts[first] < start)
        {
            _ends[first] = start;
            keepFrom = first + 1;
        }

        int i = keepFrom;
        while (i < _count && _ends[i] <= end)
        {
            i++;
        }

        if (i < _count && _starts[i] < end)
        {
            _starts[i] = end;
        }

        int removed = i - keepFrom;
        if (removed > 0)
        {
            Array.Copy(_starts, i, _starts, keepFrom, _count - i);
            Array.Copy(_ends, i, _ends, keepFrom, _count - i);
            _count -= removed;
        }

        return true;
    }

    /// <summary>Removes every value below <paramref name="value"/>; never needs capacity.</summary>
    public void RemoveBelow(long value)
    {
        int first = FirstEndingAfter(value);
        if (first > 0)
        {
            Array.Copy(_starts, first, _starts, 0, _count - first);
            Array.Copy(_ends, first, _ends, 0, _count - first);
            _count -= first;
        }

        if (_count > 0 && _starts[0] < value)
        {
            _starts[0] = value;
        }
    }

    private bool EnsureCapacity(int needed)
    {
        if (needed <= _starts.Length)
        {
            return true;
        }

        if (needed > MaxCount)
        {
            return false;
        }

        long grown = _starts.Length == 0 ? _initialCapacity : (long)_starts.Length * 2;
        int size = (int)Math.Min((long)MaxCount, Math.Max(needed, grown));
        Array.Resize(ref _starts, size);
        Array.Resize(ref _ends, size);
        return true;
    }
}
