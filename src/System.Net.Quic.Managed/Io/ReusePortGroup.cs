using System.Collections.Generic;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// Several UDP sockets bound to the same address and port with SO_REUSEPORT (Linux), one per worker, and the classic BPF
/// program the kernel runs on every datagram to choose the socket (SO_ATTACH_REUSEPORT_CBPF):
/// <list type="bullet">
/// <item>a short-header packet (first bit 0, RFC 9000 §17.3) goes to socket <c>payload[tagOffset] % count</c>: the last
/// octet of the connection IDs the server issues names its worker (the ID starts at payload offset 1);</item>
/// <item>a long-header packet (Initial, 0-RTT, Handshake, from a client that may not know our IDs yet) makes the program
/// return an index past the group, and the kernel falls back to its hash of the 4-tuple: new clients spread over the
/// sockets, and every packet of one client address lands on the same socket, which is where its connection starts.</item>
/// </list>
/// Sockets join the group in bind order, so socket i of the returned array is index i of the group. Anything the program
/// gets wrong (a client that moved during its handshake, a kernel without the program) reaches a worker that does not own
/// the connection, which hands the datagram over (Core's IDatagramHandoff) instead of dropping it.
/// </summary>
internal static class ReusePortGroup
{
    // Classic BPF opcodes (linux/filter.h).
    private const ushort LoadByteAbsolute = 0x30;  // BPF_LD | BPF_B | BPF_ABS
    private const ushort JumpIfSet = 0x45;         // BPF_JMP | BPF_JSET | BPF_K
    private const ushort ModuloConstant = 0x94;    // BPF_ALU | BPF_MOD | BPF_K
    private const ushort ReturnA = 0x16;           // BPF_RET | BPF_A
    private const ushort ReturnConstant = 0x06;    // BPF_RET | BPF_K

    /// <summary>
    /// The steering program: socket index for a datagram whose UDP payload holds a QUIC packet. <paramref name="tagOffset"/>
    /// is the payload offset of the worker octet of a short header, <paramref name="count"/> the sockets in the group.
    /// </summary>
    public static LinuxUdpInterop.SockFilter[] SteeringProgram(int tagOffset, int count) =>
    [
        new(LoadByteAbsolute, 0, 0, 0),                 // A = payload[0]
        new(JumpIfSet, 3, 0, 0x80),                     // long header: to the last instruction
        new(LoadByteAbsolute, 0, 0, (uint)tagOffset),   // A = worker octet of the destination connection ID
        new(ModuloConstant, 0, 0, (uint)count),         // A %= count
        new(ReturnA, 0, 0, 0),                          // socket A
        new(ReturnConstant, 0, 0, uint.MaxValue),       // out of range: the kernel's 4-tuple hash chooses
    ];

    /// <summary>Tests only: bind the group without the steering program, so that the kernel hashes every datagram by address.</summary>
    internal static bool SteeringDisabledForTests { get; set; }

    /// <summary>True where SO_REUSEPORT groups can be tried at all (Linux).</summary>
    public static bool IsSupported => OperatingSystem.IsLinux();

    /// <summary>
    /// Binds up to <paramref name="count"/> sockets to <paramref name="localEndPoint"/> (port 0: the port the first one gets)
    /// and attaches the steering program. Where SO_REUSEPORT is missing the result is one ordinary socket; when the
    /// program cannot be attached <paramref name="steered"/> is false and the kernel hashes every datagram by address.
    /// </summary>
    public static Socket[] Bind(IPEndPoint localEndPoint, int count, int tagOffset, out bool steered)
        => Bind(localEndPoint, count, count, tagOffset, out steered, out _);

    /// <summary>
    /// As <see cref="Bind(IPEndPoint, int, int, out bool)"/> for <paramref name="count"/> sockets of a group of
    /// <paramref name="groupSize"/> that spans processes (the others bind the same port with SO_REUSEPORT themselves): the
    /// sockets are reusable even when <paramref name="count"/> is 1, and the program steers by the tag modulo the whole
    /// group. Every process attaches the same program; the group keeps the last one attached. <paramref name="grouped"/>
    /// is false when the result is one ordinary socket (no SO_REUSEPORT).
    /// </summary>
    public static Socket[] Bind(IPEndPoint localEndPoint, int count, int groupSize, int tagOffset, out bool steered, out bool grouped)
    {
        steered = false;
        grouped = false;
        if (groupSize <= 1 || !IsSupported) return [UdpSocketFactory.Bind(localEndPoint)];
        var sockets = new List<Socket>(count);
        try
        {
            IPEndPoint target = localEndPoint;
            for (int i = 0; i < count; i++)
            {
                Socket? socket = TryBindReusable(target);
                if (socket is null)
                {
                    if (i == 0) return [UdpSocketFactory.Bind(localEndPoint)]; // no SO_REUSEPORT: one socket
                    throw new SocketException((int)SocketError.AddressAlreadyInUse);
                }
                sockets.Add(socket);
                if (i == 0) target = new IPEndPoint(localEndPoint.Address, ((IPEndPoint)socket.LocalEndPoint!).Port);
            }
            grouped = true;
            steered = !SteeringDisabledForTests && LinuxUdpInterop.TryAttachReusePortProgram(sockets[0].SafeHandle, SteeringProgram(tagOffset, groupSize), out _);
            return sockets.ToArray();
        }
        catch
        {
            foreach (Socket socket in sockets) socket.Dispose();
            throw;
        }
    }

    /// <summary>A socket with SO_REUSEPORT bound to <paramref name="localEndPoint"/>; null when the option is refused.</summary>
    private static Socket? TryBindReusable(IPEndPoint localEndPoint)
    {
        var socket = new Socket(localEndPoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            bool reusable;
            try
            {
                reusable = LinuxUdpInterop.TrySetReusePort(socket.SafeHandle, out _);
            }
            catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
            {
                reusable = false;
            }
            if (!reusable)
            {
                socket.Dispose();
                return null;
            }
            UdpSocketFactory.Configure(socket, localEndPoint);
            socket.Bind(localEndPoint);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
