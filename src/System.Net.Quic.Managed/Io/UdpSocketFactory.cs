using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>Creates and tunes the UDP sockets the driver uses.</summary>
internal static class UdpSocketFactory
{
    /// <summary>Receive and send buffer sizes we ask for; the kernel may cap them (net.core.rmem_max), and we keep what it gives.</summary>
    public const int SocketBufferSize = 8 * 1024 * 1024;

    /// <summary>
    /// A UDP socket bound to <paramref name="localEndPoint"/>. An IPv6 any-address socket is dual-stack, so one
    /// listener on [::] serves IPv4 clients too.
    /// </summary>
    public static Socket Bind(IPEndPoint localEndPoint)
    {
        var socket = new Socket(localEndPoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            Configure(socket, localEndPoint);
            socket.Bind(localEndPoint);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Dual stack for an IPv6 any-address, large buffers: what every socket of ours gets before its bind.</summary>
    internal static void Configure(Socket socket, IPEndPoint localEndPoint)
    {
        if (localEndPoint.AddressFamily == AddressFamily.InterNetworkV6 && localEndPoint.Address.Equals(IPAddress.IPv6Any))
        {
            socket.DualMode = true;
        }
        TrySetBuffer(socket, SocketOptionName.ReceiveBuffer);
        TrySetBuffer(socket, SocketOptionName.SendBuffer);
    }

    private static void TrySetBuffer(Socket socket, SocketOptionName option)
    {
        try
        {
            socket.SetSocketOption(SocketOptionLevel.Socket, option, SocketBufferSize);
        }
        catch (SocketException)
        {
            // Keep the default: a smaller buffer costs throughput, not correctness.
        }
    }

    /// <summary>The local address to use for a client talking to <paramref name="remote"/> when the app gave none.</summary>
    public static IPEndPoint DefaultLocalFor(IPEndPoint remote)
        => remote.AddressFamily == AddressFamily.InterNetworkV6 ? new IPEndPoint(IPAddress.IPv6Any, 0) : new IPEndPoint(IPAddress.Any, 0);
}
