namespace System.Net.Quic.Managed.Core;

/// <summary>
/// A list that keeps its array when cleared, for records reused from a pool (<see cref="SentFramesPool"/>): after the
/// first packets it grows no more. Mutate it only through a field (a copy would add to the copy).
/// </summary>
internal struct ReusableList<T>
{
    private T[]? _items;

    public int Count { get; private set; }

    public readonly ReadOnlySpan<T> Items => new(_items, 0, Count);

    /// <summary>The element at <paramref name="index"/>, by reference.</summary>
    public readonly ref T this[int index] => ref _items![index];

    public void Add(in T item)
    {
        if (_items is null) _items = new T[4];
        else if (Count == _items.Length) Array.Resize(ref _items, Count * 2);
        _items[Count++] = item;
    }

    public void Clear() => Count = 0;
}
