using System.Buffers.Binary;
using System.Net.Quic.Managed.Core;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// Converts between <see cref="NetworkAddress"/> and <see cref="SocketAddress"/> without allocating, so the
/// receive and send paths can use the allocation-free Socket.ReceiveFrom/SendTo overloads. Uses the sockaddr
/// layout every platform .NET runs on shares: port (big-endian) at byte 2, IPv4 address at 4, IPv6 address at 8.
/// A dual-stack (IPv6) socket sends to IPv4 peers through IPv4-mapped addresses.
/// </summary>
internal sealed class SocketAddressCodec
{
    private readonly AddressFamily _socketFamily;
    private readonly SocketAddress _sendAddress;

    public SocketAddressCodec(AddressFamily socketFamily)
    {
        _socketFamily = socketFamily;
        _sendAddress = new SocketAddress(socketFamily, SocketAddress.GetMaximumAddressSize(socketFamily));
        ReceiveAddress = new SocketAddress(socketFamily, SocketAddress.GetMaximumAddressSize(socketFamily));
    }

    /// <summary>A reusable buffer for ReceiveFrom to fill.</summary>
    public SocketAddress ReceiveAddress { get; }

    public static NetworkAddress Read(SocketAddress address)
    {
        Span<byte> buffer = address.Buffer.Span;
        ushort port = BinaryPrimitives.ReadUInt16BigEndian(buffer.Slice(2));
        return address.Family == AddressFamily.InterNetwork
            ? new NetworkAddress(buffer.Slice(4, 4), port)
            : new NetworkAddress(buffer.Slice(8, 16), port);
    }

    /// <summary>Fills the reusable send address for <paramref name="remote"/> and returns it.</summary>
    public SocketAddress ForSend(in NetworkAddress remote)
    {
        Span<byte> buffer = _sendAddress.Buffer.Span;
        BinaryPrimitives.WriteUInt16BigEndian(buffer.Slice(2), remote.Port);
        if (_socketFamily == AddressFamily.InterNetwork)
        {
            if (remote.IsIPv6) throw new SocketException((int)SocketError.AddressFamilyNotSupported);
            remote.AddressSpan.CopyTo(buffer.Slice(4));
            return _sendAddress;
        }
        buffer.Slice(4, 4).Clear(); // flow info
        Span<byte> address = buffer.Slice(8, 16);
        if (!remote.IsIPv6)
        {
            address.Slice(0, 10).Clear();
            address[10] = 0xff;
            address[11] = 0xff;
            remote.AddressSpan.CopyTo(address.Slice(12));
        }
        else
        {
            remote.AddressSpan.CopyTo(address);
        }
        buffer.Slice(24, 4).Clear(); // scope id
        return _sendAddress;
    }
}
