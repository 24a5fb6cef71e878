using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// An IPv4 or IPv6 address with a port, held inline (no allocation), comparable and hashable, so the core
/// can key paths and the anti-amplification budget by it. IPv4-mapped IPv6 addresses are normalised to IPv4.
/// </summary>
internal readonly struct NetworkAddress : IEquatable<NetworkAddress>
{
    [InlineArray(16)]
    private struct AddressBytes
    {
        private byte _element0;
    }

    private readonly AddressBytes _bytes;

    private readonly byte _kind; // 0: none, 4: IPv4, 6: IPv6

    /// <summary>True for an IPv6 address (IPv4-mapped ones are stored as IPv4).</summary>
    public bool IsIPv6 => _kind == 6;

    public ushort Port { get; }

    public NetworkAddress(ReadOnlySpan<byte> address, ushort port)
    {
        if (address.Length == 16 && IsV4Mapped(address)) address = address.Slice(12);
        _kind = address.Length switch
        {
            4 => 4,
            16 => 6,
            _ => throw new ArgumentException("An address is 4 or 16 bytes.", nameof(address)),
        };
        address.CopyTo(_bytes);
        Port = port;
    }

    public static NetworkAddress FromEndPoint(IPEndPoint endPoint)
    {
        Span<byte> bytes = stackalloc byte[16];
        if (!endPoint.Address.TryWriteBytes(bytes, out int written)) throw new ArgumentException("Unsupported address.", nameof(endPoint));
        return new NetworkAddress(bytes.Slice(0, written), (ushort)endPoint.Port);
    }

    public int AddressLength => _kind == 4 ? 4 : 16;

    [UnscopedRef]
    public ReadOnlySpan<byte> AddressSpan => ((ReadOnlySpan<byte>)_bytes).Slice(0, AddressLength);

    public IPEndPoint ToEndPoint() => new(new IPAddress(AddressSpan), Port);

    public bool IsDefault => _kind == 0;

    private static bool IsV4Mapped(ReadOnlySpan<byte> a)
        => BinaryPrimitives.ReadUInt64BigEndian(a) == 0 && BinaryPrimitives.ReadUInt32BigEndian(a.Slice(8)) == 0xffff;

    public bool Equals(NetworkAddress other) => _kind == other._kind && Port == other.Port && AddressSpan.SequenceEqual(other.AddressSpan);

    /// <summary>Same IP address, any port (RFC 9000 §9.3: a port-only change is usually NAT rebinding).</summary>
    public bool SameHost(in NetworkAddress other) => _kind == other._kind && AddressSpan.SequenceEqual(other.AddressSpan);

    public override bool Equals(object? obj) => obj is NetworkAddress other && Equals(other);

    public override int GetHashCode()
    {
        var hash = new HashCode();
        hash.AddBytes(AddressSpan);
        hash.Add(Port);
        return hash.ToHashCode();
    }

    public static bool operator ==(NetworkAddress left, NetworkAddress right) => left.Equals(right);

    public static bool operator !=(NetworkAddress left, NetworkAddress right) => !left.Equals(right);

    public override string ToString() => IsDefault ? "(none)" : ToEndPoint().ToString();
}
