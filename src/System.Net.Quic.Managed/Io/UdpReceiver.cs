using System.Net.Quic.Managed.Core;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// How the driver thread takes datagrams off its socket: <see cref="RecvMmsgUdpReceiver"/> (Linux: many datagrams per
/// system call with recvmmsg, and with UDP_GRO many same-size datagrams per buffer) or <see cref="SocketUdpReceiver"/>
/// (any OS: Socket.ReceiveFrom, one datagram per call). Both reuse their buffers and address storage: receiving allocates
/// nothing. Used only on the driver thread.
/// </summary>
internal abstract class UdpReceiver
{
    /// <summary>
    /// The largest datagram every receive path accepts (the recvmmsg path without GRO reads into 4 KiB slots; longer
    /// datagrams are truncated and dropped).
    /// </summary>
    public const int MaxReceivableDatagram = 4096;

    /// <summary>The largest UDP payload of any datagram (IPv6: 65,535 minus the 8-byte UDP header; IPv4 allows 65,507).</summary>
    public const int MaxUdpPayload = 65_527;

    /// <summary>AppContext switch (runtimeconfig or AppContext.SetSwitch) that turns recvmmsg/UDP_GRO off: every socket uses the portable path.</summary>
    public const string DisableBatchingSwitch = "System.Net.Quic.Managed.DisableUdpBatching";

    /// <summary>The same as an environment variable ("1" or "true"), for tools and tests run from a shell.</summary>
    public const string DisableBatchingEnvironmentVariable = "QUIC_MANAGED_DISABLE_UDP_BATCHING";

    /// <summary>
    /// AppContext switch that makes the I/O layer run as on an OS without the Linux fast path: no recvmmsg/UDP_GRO, no
    /// poll/eventfd waits, no UDP_SEGMENT (GSO), no ECN or Don't Fragment socket options. The test suite runs the API
    /// tests once this way, so the path Windows and macOS take is exercised on Linux.
    /// </summary>
    public const string PortableIoSwitch = "System.Net.Quic.Managed.PortableIo";

    /// <summary>The same as an environment variable ("1" or "true").</summary>
    public const string PortableIoEnvironmentVariable = "QUIC_MANAGED_PORTABLE_IO";

    /// <summary>True when configuration asks for the portable I/O path as a whole (<see cref="PortableIoSwitch"/>).</summary>
    public static bool PortableIoForced => IsSet(PortableIoSwitch, PortableIoEnvironmentVariable);

    /// <summary>True when configuration asks for the portable receive path.</summary>
    public static bool BatchingDisabledByConfiguration => PortableIoForced || IsSet(DisableBatchingSwitch, DisableBatchingEnvironmentVariable);

    private static bool IsSet(string appContextSwitch, string environmentVariable)
    {
        if (AppContext.TryGetSwitch(appContextSwitch, out bool enabled) && enabled) return true;
        string? value = Environment.GetEnvironmentVariable(environmentVariable);
        return value is "1" || string.Equals(value, "true", StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>
    /// The batching receiver where the OS has it and nothing disabled it, else the portable one. Never throws for a
    /// missing native library or system call: that only selects the portable path.
    /// </summary>
    public static UdpReceiver Create(Socket socket, bool allowBatching = true)
    {
        if (allowBatching && OperatingSystem.IsLinux() && !BatchingDisabledByConfiguration
            && RecvMmsgUdpReceiver.TryCreate(socket) is { } batched)
        {
            return batched;
        }
        return new SocketUdpReceiver(socket);
    }

    /// <summary>True for the recvmmsg path.</summary>
    public abstract bool IsBatched { get; }

    /// <summary>True when the kernel may hand over several datagrams coalesced in one message (UDP_GRO).</summary>
    public abstract bool IsCoalescing { get; }

    /// <summary>The most messages one <see cref="Receive"/> call returns.</summary>
    public abstract int Capacity { get; }

    /// <summary>
    /// The largest datagram this path receives whole: <see cref="MaxUdpPayload"/> when its buffers hold any datagram,
    /// <see cref="MaxReceivableDatagram"/> on the recvmmsg path without GRO. Advertised as max_udp_payload_size (RFC 9000
    /// §18.2) so no peer sends more.
    /// </summary>
    public abstract int MaxDatagramSize { get; }

    /// <summary>
    /// Takes the datagrams already queued on the socket, up to <see cref="Capacity"/> messages, without waiting when
    /// <paramref name="knownReadable"/> is false. Returns how many messages <see cref="TryGetMessage"/> can read, 0 when
    /// none was queued or on error. <paramref name="error"/> is Success, or the socket error of this call (an ICMP error
    /// on a connected socket, say); OperationNotSupported means this receiver cannot work here and must be replaced.
    /// </summary>
    public abstract int Receive(bool knownReadable, out SocketError error);

    /// <summary>
    /// Message <paramref name="index"/> of the last <see cref="Receive"/>: its bytes (valid until the next Receive; the
    /// caller may modify them), its source, the size of each coalesced datagram in it (0: the message is one datagram)
    /// and its ECN bits (RFC 3168) when the receive path reads them (IP_RECVTOS); 0 (Not-ECT) otherwise: the portable
    /// path cannot, and ECN validation then fails at the peer. False when the message must be dropped (truncated, or from
    /// an address family QUIC does not use).
    /// </summary>
    public abstract bool TryGetMessage(int index, out Span<byte> data, out NetworkAddress remote, out int segmentSize, out byte ecn);

    /// <summary>Gives pooled buffers back. Only once no <see cref="Receive"/> can run any more; the receiver is unusable afterwards.</summary>
    public virtual void Release()
    {
    }

    /// <summary>Messages dropped because they did not fit the receive buffer.</summary>
    public long TruncatedMessages { get; protected set; }
}
