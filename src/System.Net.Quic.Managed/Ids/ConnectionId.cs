using System.Diagnostics.CodeAnalysis;
using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Ids;

/// <summary>
/// A QUIC connection ID (RFC 9000 §5.1) held inline, so it can key a dictionary and travel in
/// structs without allocating. Zero length is valid (§5.1: an endpoint may use zero-length IDs).
/// </summary>
internal readonly struct ConnectionId : IEquatable<ConnectionId>
{
    /// <summary>The largest connection ID QUIC v1 and v2 allow. RFC 9000 §17.2.</summary>
    public const int MaxLength = 20;

    private readonly ConnectionIdBytes _bytes;

    /// <summary>Number of bytes in the ID (0 to 20).</summary>
    public int Length { get; }

    public static ConnectionId Empty => default;

    public ConnectionId(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length > MaxLength) throw new ArgumentOutOfRangeException(nameof(bytes), "A connection ID is at most 20 bytes.");
        bytes.CopyTo(_bytes);
        Length = bytes.Length;
    }

    /// <summary>The ID's bytes.</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> Span => ((ReadOnlySpan<byte>)_bytes).Slice(0, Length);

    /// <summary>A fresh ID of <paramref name="length"/> bytes from <paramref name="random"/>.</summary>
    public static ConnectionId Create(IRandomSource random, int length)
    {
        if ((uint)length > MaxLength) throw new ArgumentOutOfRangeException(nameof(length));
        Span<byte> bytes = stackalloc byte[MaxLength];
        random.Fill(bytes.Slice(0, length));
        return new ConnectionId(bytes.Slice(0, length));
    }

    public bool Equals(ConnectionId other) => Span.SequenceEqual(other.Span);

    public override bool Equals(object? obj) => obj is ConnectionId other && Equals(other);

    public override int GetHashCode()
    {
        var hash = new HashCode();
        hash.AddBytes(Span);
        return hash.ToHashCode();
    }

    public static bool operator ==(ConnectionId left, ConnectionId right) => left.Equals(right);

    public static bool operator !=(ConnectionId left, ConnectionId right) => !left.Equals(right);

    public override string ToString() => Length == 0 ? "(empty)" : Convert.ToHexStringLower(Span);
}
