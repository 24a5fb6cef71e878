namespace System.Net.Quic.Managed.Wire;

/// <summary>The preferred_address transport parameter. RFC 9000 §18.2, Figure 22. A family the server does not offer
/// is sent as an all-zero address and port.</summary>
internal sealed class PreferredAddress
{
    /// <summary>Length without the connection ID: 4 + 2 + 16 + 2 + 1 + 16.</summary>
    private const int FixedLength = 41;

    public IPAddress IPv4Address { get; init; } = IPAddress.Any;

    public ushort IPv4Port { get; init; }

    public IPAddress IPv6Address { get; init; } = IPAddress.IPv6Any;

    public ushort IPv6Port { get; init; }

    /// <summary>1..20 bytes: a zero-length connection ID here is a TRANSPORT_PARAMETER_ERROR.</summary>
    public byte[] ConnectionId { get; init; } = [];

    /// <summary>16 bytes.</summary>
    public byte[] StatelessResetToken { get; init; } = new byte[StatelessReset.TokenLength];

    /// <summary>The IPv4 endpoint, or null when the server sent 0.0.0.0:0.</summary>
    public IPEndPoint? IPv4EndPoint => IPv4Port == 0 && IPv4Address.Equals(IPAddress.Any) ? null : new IPEndPoint(IPv4Address, IPv4Port);

    /// <summary>The IPv6 endpoint, or null when the server sent [::]:0.</summary>
    public IPEndPoint? IPv6EndPoint => IPv6Port == 0 && IPv6Address.Equals(IPAddress.IPv6Any) ? null : new IPEndPoint(IPv6Address, IPv6Port);

    public int EncodedLength => FixedLength + ConnectionId.Length;

    internal bool IsValid =>
        IPv4Address.AddressFamily == Sockets.AddressFamily.InterNetwork &&
        IPv6Address.AddressFamily == Sockets.AddressFamily.InterNetworkV6 &&
        ConnectionId.Length >= 1 && ConnectionId.Length <= ConnectionIdLimits.MaxLength &&
        StatelessResetToken.Length == StatelessReset.TokenLength;

    /// <summary>Parses the parameter value; it must be consumed exactly.</summary>
    public static bool TryDecode(ReadOnlySpan<byte> value, out PreferredAddress? address)
    {
        address = null;
        var reader = new QuicReader(value);
        if (!reader.TryReadBytes(4, out ReadOnlySpan<byte> v4) || !reader.TryReadUInt16(out ushort v4Port) ||
            !reader.TryReadBytes(16, out ReadOnlySpan<byte> v6) || !reader.TryReadUInt16(out ushort v6Port) ||
            !reader.TryReadByte(out byte cidLength) || cidLength < 1 || cidLength > ConnectionIdLimits.MaxLength ||
            !reader.TryReadBytes(cidLength, out ReadOnlySpan<byte> cid) ||
            !reader.TryReadBytes(StatelessReset.TokenLength, out ReadOnlySpan<byte> token) || !reader.IsEmpty)
        {
            return false;
        }

        address = new PreferredAddress
        {
            IPv4Address = new IPAddress(v4),
            IPv4Port = v4Port,
            IPv6Address = new IPAddress(v6),
            IPv6Port = v6Port,
            ConnectionId = cid.ToArray(),
            StatelessResetToken = token.ToArray(),
        };
        return true;
    }

    /// <summary>Writes the parameter value (not its id or length).</summary>
    public bool TryEncode(ref QuicWriter writer)
    {
        if (!IsValid || writer.Remaining < EncodedLength)
        {
            return false;
        }

        Span<byte> address = stackalloc byte[16];
        IPv4Address.TryWriteBytes(address, out _);
        writer.TryWriteBytes(address.Slice(0, 4));
        writer.TryWriteUInt16(IPv4Port);
        IPv6Address.TryWriteBytes(address, out _);
        writer.TryWriteBytes(address);
        writer.TryWriteUInt16(IPv6Port);
        writer.TryWriteByte((byte)ConnectionId.Length);
        writer.TryWriteBytes(ConnectionId);
        writer.TryWriteBytes(StatelessResetToken);
        return true;
    }
}
