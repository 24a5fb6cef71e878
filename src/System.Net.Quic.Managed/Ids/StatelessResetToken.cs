using System.Buffers.Binary;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Ids;

/// <summary>A 16-byte stateless reset token (RFC 9000 §10.3), held by value.</summary>
internal readonly struct StatelessResetToken : IEquatable<StatelessResetToken>
{
    public const int Length = 16;

    private readonly ulong _high;
    private readonly ulong _low;

    public StatelessResetToken(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length != Length) throw new ArgumentException("A stateless reset token is 16 bytes.", nameof(bytes));
        _high = BinaryPrimitives.ReadUInt64BigEndian(bytes);
        _low = BinaryPrimitives.ReadUInt64BigEndian(bytes.Slice(8));
    }

    public void CopyTo(Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt64BigEndian(destination, _high);
        BinaryPrimitives.WriteUInt64BigEndian(destination.Slice(8), _low);
    }

    /// <summary>
    /// Compares against the last 16 bytes of a received datagram without a data-dependent early exit,
    /// so timing does not reveal how much of a guessed token was right (RFC 9000 §10.3.1).
    /// </summary>
    public bool FixedTimeEquals(ReadOnlySpan<byte> candidate)
    {
        if (candidate.Length != Length) return false;
        Span<byte> mine = stackalloc byte[Length];
        CopyTo(mine);
        return CryptographicOperations.FixedTimeEquals(mine, candidate);
    }

    public bool Equals(StatelessResetToken other) => _high == other._high && _low == other._low;

    public override bool Equals(object? obj) => obj is StatelessResetToken other && Equals(other);

    public override int GetHashCode() => HashCode.Combine(_high, _low);

    public override string ToString() => $"{_high:x16}{_low:x16}";
}
