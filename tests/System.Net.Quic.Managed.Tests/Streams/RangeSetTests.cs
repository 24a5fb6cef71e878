using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Streams;

public class RangeSetTests
{
    private static string Dump(RangeSet set)
    {
        var parts = new List<string>();
        for (int i = 0; i < set.Count; i++)
        {
            parts.Add($"[{set.StartAt(i)},{set.EndAt(i)})");
        }

        return string.Join("", parts);
    }

    [Fact]
    public void AddMergesOverlappingAndAdjacent()
    {
        var set = new RangeSet();
        Assert.True(set.Add(10, 20));
        Assert.True(set.Add(30, 40));
        Assert.Equal("[10,20)[30,40)", Dump(set));
        set.Add(20, 25); // adjacent to the first
        Assert.Equal("[10,25)[30,40)", Dump(set));
        set.Add(0, 5);
        Assert.Equal("[0,5)[10,25)[30,40)", Dump(set));
        set.Add(3, 35); // spans three ranges
        Assert.Equal("[0,40)", Dump(set));
        set.Add(50, 50); // empty: no-op
        Assert.Equal(1, set.Count);
        set.Add(40, 41);
        Assert.Equal("[0,41)", Dump(set));
        Assert.Equal(41, set.TotalLength);
    }

    [Fact]
    public void RemoveSplitsAndTrims()
    {
        var set = new RangeSet();
        set.Add(0, 100);
        set.Remove(10, 20);
        Assert.Equal("[0,10)[20,100)", Dump(set));
        set.Remove(5, 25);
        Assert.Equal("[0,5)[25,100)", Dump(set));
        set.Remove(90, 200);
        Assert.Equal("[0,5)[25,90)", Dump(set));
        set.Remove(0, 30);
        Assert.Equal("[30,90)", Dump(set));
        set.RemoveBelow(40);
        Assert.Equal("[40,90)", Dump(set));
        set.RemoveBelow(90);
        Assert.True(set.IsEmpty);
    }

    [Fact]
    public void ContainsAndOverlaps()
    {
        var set = new RangeSet();
        set.Add(10, 20);
        set.Add(30, 40);
        Assert.False(set.Contains(9));
        Assert.True(set.Contains(10));
        Assert.True(set.Contains(19));
        Assert.False(set.Contains(20));
        Assert.True(set.ContainsRange(12, 18));
        Assert.False(set.ContainsRange(15, 31));
        Assert.True(set.Overlaps(15, 31));
        Assert.False(set.Overlaps(20, 30));
        Assert.Equal(10, set.Min);
        Assert.Equal(40, set.Max);
    }

    [Fact]
    public void MaxCountBoundsFragmentationWithoutChangingTheSet()
    {
        var set = new RangeSet(initialCapacity: 2, maxCount: 3);
        Assert.True(set.Add(0, 1));
        Assert.True(set.Add(2, 3));
        Assert.True(set.Add(4, 5));
        Assert.False(set.Add(6, 7));
        Assert.Equal("[0,1)[2,3)[4,5)", Dump(set));
        Assert.True(set.Add(1, 2)); // merging still works at the bound
        Assert.Equal("[0,3)[4,5)", Dump(set));
        Assert.True(set.Add(10, 20));
        Assert.False(set.Remove(12, 13)); // split would need a fourth range
        Assert.Equal("[0,3)[4,5)[10,20)", Dump(set));
    }

    [Fact]
    public void RandomOperationsMatchBitmapModel()
    {
        var random = new Random(1234);
        for (int round = 0; round < 200; round++)
        {
            var set = new RangeSet(1, 1 << 12);
            var model = new bool[300];
            for (int op = 0; op < 60; op++)
            {
                int a = random.Next(300), b = random.Next(300);
                int s = Math.Min(a, b), e = Math.Max(a, b);
                int kind = random.Next(3);
                if (kind == 0)
                {
                    Assert.True(set.Add(s, e));
                    for (int i = s; i < e; i++) model[i] = true;
                }
                else if (kind == 1)
                {
                    Assert.True(set.Remove(s, e));
                    for (int i = s; i < e; i++) model[i] = false;
                }
                else
                {
                    set.RemoveBelow(s);
                    for (int i = 0; i < s; i++) model[i] = false;
                }

                // Same membership, and ranges are sorted, disjoint, non-adjacent, non-empty.
                var fromSet = new bool[300];
                for (int r = 0; r < set.Count; r++)
                {
                    for (long i = set.StartAt(r); i < set.EndAt(r); i++) fromSet[i] = true;
                }

                Assert.True(model.AsSpan().SequenceEqual(fromSet), $"round {round} op {op}");
                int probe = random.Next(300);
                Assert.Equal(model[probe], set.Contains(probe));

                for (int i = 0; i < set.Count; i++)
                {
                    Assert.True(set.StartAt(i) < set.EndAt(i));
                    if (i > 0) Assert.True(set.EndAt(i - 1) < set.StartAt(i));
                }
            }
        }
    }
    [Fact]
    public void AFreshSetWorksBeforeItsStorageExists()
    {
        // Storage is allocated with the first range: every operation must cope with none yet.
        var set = new RangeSet(initialCapacity: 2, maxCount: 3);
        Assert.False(set.Contains(0));
        Assert.True(set.ContainsRange(5, 5));
        Assert.False(set.Overlaps(0, 10));
        Assert.True(set.Remove(0, 10));
        set.RemoveBelow(100);
        Assert.True(set.IsEmpty);
        Assert.True(set.Add(10, 20));
        Assert.True(set.Add(30, 40));
        Assert.True(set.Add(50, 60)); // grows past the initial capacity
        Assert.False(set.Add(70, 80)); // beyond MaxCount: refused, set unchanged
        Assert.Equal(3, set.Count);
        Assert.Equal(30, set.TotalLength);
    }
}
