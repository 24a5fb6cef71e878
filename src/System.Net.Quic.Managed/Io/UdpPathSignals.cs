using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The IP-header side of ECN (RFC 9000 §13.4) and path MTU discovery (RFC 9000 §14.3) for one socket, through managed
/// socket options only (Socket.SetRawSocketOption, Linux): the ECN codepoint of outgoing datagrams (IP_TOS and
/// IPV6_TCLASS, set only when the marking changes: it is the same for long runs), asking the kernel for the TOS byte of
/// received datagrams (IP_RECVTOS / IPV6_RECVTCLASS, read from the recvmmsg control data), and the Don't Fragment bit
/// without the kernel's PMTU cache (IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE), so that a probe larger than the path is
/// lost (or refused with EMSGSIZE) instead of fragmented. Where an option is refused (other OSes), datagrams go out
/// Not-ECT and ECN validation fails cleanly in the core.
/// </summary>
internal sealed class UdpPathSignals
{
    private const int IpProtoIp = 0;
    private const int IpTos = 1;
    private const int IpMtuDiscover = 10;
    private const int IpRecvTos = 13;
    private const int IpPmtuDiscProbe = 3;
    private const int IpProtoIpv6 = 41;
    private const int Ipv6MtuDiscover = 23;
    private const int Ipv6PmtuDiscProbe = 3;
    private const int Ipv6RecvTClass = 66;
    private const int Ipv6TClass = 67;

    private readonly Socket _socket;
    private readonly bool _v6;
    private byte _currentEcn;

    public UdpPathSignals(Socket socket)
    {
        _socket = socket;
        _v6 = socket.AddressFamily == AddressFamily.InterNetworkV6;
        if (!OperatingSystem.IsLinux() || UdpReceiver.PortableIoForced) return;
        // A dual-stack IPv6 socket sends and receives IPv4 too: the IPv4 options apply to that traffic.
        ReceivesEcn = TrySet(IpProtoIp, IpRecvTos, 1) | (_v6 && TrySet(IpProtoIpv6, Ipv6RecvTClass, 1));
        DontFragment = TrySet(IpProtoIp, IpMtuDiscover, IpPmtuDiscProbe) | (_v6 && TrySet(IpProtoIpv6, Ipv6MtuDiscover, Ipv6PmtuDiscProbe));
        CanMark = true;
    }

    /// <summary>The kernel reports the TOS / Traffic Class byte of received datagrams.</summary>
    public bool ReceivesEcn { get; }

    /// <summary>Datagrams leave with the Don't Fragment bit (path MTU probes are not fragmented).</summary>
    public bool DontFragment { get; }

    /// <summary>Outgoing datagrams can carry an ECN codepoint.</summary>
    public bool CanMark { get; private set; }

    /// <summary>Datagrams sent from now on carry <paramref name="ecn"/> (two bits); a no-op when it is already set.</summary>
    public void EnsureMarking(byte ecn)
    {
        ecn &= 0b11;
        if (ecn == _currentEcn || !CanMark) return;
        bool set = TrySet(IpProtoIp, IpTos, ecn) | (_v6 && TrySet(IpProtoIpv6, Ipv6TClass, ecn));
        if (set) _currentEcn = ecn;
        else CanMark = false; // not Linux after all, or refused: stay Not-ECT; the core's validation fails and stops asking
    }

    private bool TrySet(int level, int name, int value)
    {
        try
        {
            Span<byte> bytes = stackalloc byte[sizeof(int)];
            BitConverter.TryWriteBytes(bytes, value);
            _socket.SetRawSocketOption(level, name, bytes);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
        catch (PlatformNotSupportedException)
        {
            return false;
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
    }
}
