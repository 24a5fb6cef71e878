using System.Net.Quic.Managed.Core;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The portable receive path (every OS, and Linux when batching is off or unavailable): one Socket.ReceiveFrom per
/// datagram into a reused buffer, with a reused <see cref="SocketAddress"/> (the EndPoint overloads allocate per call).
/// The socket stays blocking (sends rely on it for back-pressure), so a receive without a readiness report first asks
/// Poll(0): the portable API has no non-blocking receive that does not throw when nothing is queued.
/// </summary>
internal sealed class SocketUdpReceiver : UdpReceiver
{
    private const int BufferSize = 65_535;

    private readonly Socket _socket;
    private readonly SocketAddressCodec _addresses;
    private readonly byte[] _buffer = new byte[BufferSize];
    private int _length;

    public SocketUdpReceiver(Socket socket)
    {
        _socket = socket;
        _addresses = new SocketAddressCodec(socket.AddressFamily);
    }

    public override bool IsBatched => false;

    public override bool IsCoalescing => false;

    public override int Capacity => 1;

    public override int MaxDatagramSize => MaxUdpPayload; // the buffer is 65,535 bytes

    public override int Receive(bool knownReadable, out SocketError error)
    {
        error = SocketError.Success;
        try
        {
            if (!knownReadable && !_socket.Poll(0, SelectMode.SelectRead)) return 0;
            _length = _socket.ReceiveFrom(_buffer, SocketFlags.None, _addresses.ReceiveAddress);
            return 1;
        }
        catch (SocketException e)
        {
            error = e.SocketErrorCode;
            return 0;
        }
    }

    public override bool TryGetMessage(int index, out Span<byte> data, out NetworkAddress remote, out int segmentSize, out byte ecn)
    {
        data = _buffer.AsSpan(0, _length);
        segmentSize = 0;
        ecn = 0;
        remote = _length == 0 ? default : SocketAddressCodec.Read(_addresses.ReceiveAddress);
        return true;
    }
}
