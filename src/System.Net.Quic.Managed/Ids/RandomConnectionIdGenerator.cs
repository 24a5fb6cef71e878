using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Ids;

/// <summary>IDs of random bytes only (the default).</summary>
internal sealed class RandomConnectionIdGenerator : ConnectionIdGenerator
{
    private readonly int _length;

    public RandomConnectionIdGenerator(int length)
    {
        if ((uint)length > ConnectionId.MaxLength) throw new ArgumentOutOfRangeException(nameof(length));
        _length = length;
    }

    public override int Length => _length;

    public override ConnectionId Create(IRandomSource random) => ConnectionId.Create(random, _length);
}
