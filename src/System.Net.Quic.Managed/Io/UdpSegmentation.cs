using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// UDP generic segmentation offload (Linux UDP_SEGMENT, kernel 4.18+): one send of a buffer holding several
/// equal-size datagrams, which the kernel splits. Set through Socket.SetRawSocketOption, so it needs no P/Invoke;
/// where the option is refused (other OSes, old kernels) the driver sends datagram by datagram.
/// </summary>
internal sealed class UdpSegmentation
{
    private const int SolUdp = 17;
    private const int UdpSegment = 103;

    /// <summary>The kernel's limit on segments per send (UDP_MAX_SEGMENTS).</summary>
    public const int MaxSegments = 64;

    private readonly Socket _socket;
    private int _currentSegmentSize;

    public UdpSegmentation(Socket socket, bool enable)
    {
        _socket = socket;
        // Probe with 0 ("no segmentation"): the option must not split single datagrams sent later (see PrepareSingleSend).
        IsEnabled = enable && OperatingSystem.IsLinux() && !UdpReceiver.PortableIoForced && TrySet(0);
    }

    public bool IsEnabled { get; private set; }

    /// <summary>Makes the socket split sends into <paramref name="segmentSize"/>-byte datagrams. False when that failed (GSO is then off).</summary>
    public bool Ensure(int segmentSize)
    {
        if (!IsEnabled) return false;
        if (segmentSize == _currentSegmentSize) return true;
        if (TrySet(segmentSize)) return true;
        IsEnabled = false;
        return false;
    }

    /// <summary>
    /// The socket option stays in force after a batch: a later single datagram longer than the last segment size would be
    /// split by the kernel into pieces the peer cannot decrypt. Before a single send, turn segmentation off when needed.
    /// Returns false only if the option is stuck at a size that would split this datagram.
    /// </summary>
    public bool PrepareSingleSend(int length)
    {
        if (_currentSegmentSize == 0 || length <= _currentSegmentSize) return true;
        if (TrySet(0)) return true;
        IsEnabled = false;
        return false;
    }

    private bool TrySet(int segmentSize)
    {
        try
        {
            Span<byte> value = stackalloc byte[sizeof(int)];
            BitConverter.TryWriteBytes(value, segmentSize);
            _socket.SetRawSocketOption(SolUdp, UdpSegment, value);
            _currentSegmentSize = segmentSize;
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
    }
}
