using System.Net.Quic.Managed.Io;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// test.sh runs the API tests a second time with QUIC_MANAGED_PORTABLE_IO=1, the I/O path of every OS without the
/// Linux fast path. This test proves that pass really is on the portable path (and skips in the ordinary pass).
/// </summary>
public class PortableIoPassTests
{
    [SkippableFact]
    public void ThePortablePassUsesNoLinuxFastPath()
    {
        Skip.IfNot(UdpReceiver.PortableIoForced, $"runs in test.sh's pass with {UdpReceiver.PortableIoEnvironmentVariable}=1");
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.False(UdpReceiver.Create(socket).IsBatched);                     // no recvmmsg / UDP_GRO
        Assert.False(new UdpSegmentation(socket, enable: true).IsEnabled);       // no UDP_SEGMENT (GSO)
        var signals = new UdpPathSignals(socket);                                // no ECN or Don't Fragment socket options
        Assert.False(signals.ReceivesEcn);
        Assert.False(signals.CanMark);
        Assert.False(signals.DontFragment);
    }
}
