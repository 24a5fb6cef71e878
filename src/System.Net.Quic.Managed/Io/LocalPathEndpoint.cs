using System.Net.Quic.Managed.Core;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// The sockets of one endpoint by local path number (RFC 9000 §9: a server's preferred address, a migrating client's new
/// socket; path 0 is the endpoint's first socket). Each socket has its own <see cref="UdpDriver"/>, and all of them run on
/// one <see cref="UdpDriverLoop"/> thread, so the core is still called from one thread only. Loop thread only.
/// </summary>
internal sealed class LocalPathSockets
{
    // Indexed by path number, grown to the highest path set (most connections only ever have path 0 and 1).
    private Socket?[] _sockets = new Socket?[2];
    private SocketAddressCodec?[] _codecs = new SocketAddressCodec?[2];

    public void Set(byte path, Socket socket)
    {
        if (path >= _sockets.Length)
        {
            int length = Math.Min(256, Math.Max(path + 1, _sockets.Length * 2));
            Array.Resize(ref _sockets, length);
            Array.Resize(ref _codecs, length);
        }
        _sockets[path] = socket;
        _codecs[path] = new SocketAddressCodec(socket.AddressFamily);
    }

    public void Remove(byte path)
    {
        if (path >= _sockets.Length) return;
        _sockets[path] = null;
        _codecs[path] = null;
    }

    /// <summary>
    /// Sends a run the core meant for another path than the driver's own (one datagram per call, no GSO: this happens only
    /// while a path changes). A path without a socket loses it, as the network would.
    /// </summary>
    public void Send(ReadOnlySpan<byte> run, in OutgoingDatagram datagram)
    {
        if (datagram.LocalPath >= _sockets.Length || _sockets[datagram.LocalPath] is not { } socket) return;
        SocketAddress target = _codecs[datagram.LocalPath]!.ForSend(datagram.Remote);
        int segment = datagram.SegmentSize <= 0 ? datagram.Length : datagram.SegmentSize;
        try
        {
            for (int offset = 0; offset < datagram.Length; offset += segment)
            {
                socket.SendTo(run.Slice(offset, Math.Min(segment, datagram.Length - offset)), SocketFlags.None, target);
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // A lost datagram: recovery handles it.
        }
    }
}

/// <summary>
/// What the driver of local path <see cref="Path"/> sees of a multi-path endpoint: received datagrams are tagged with the
/// path; datagrams the core wants sent on another path go out through that path's socket here, and the driver is handed
/// an empty result (which it skips), so it only ever sends its own path's datagrams itself.
/// </summary>
internal sealed class LocalPathEndpoint(IDatagramEndpoint inner, byte path, LocalPathSockets sockets) : IDatagramEndpoint
{
    public byte Path => path;

    /// <summary>The endpoint every local path of the connection shares.</summary>
    public IDatagramEndpoint Inner => inner;

    public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs) => inner.Receive(datagram, remote, 0, path, nowUs);

    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, long nowUs) => inner.Receive(datagram, remote, ecn, path, nowUs);

    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, byte localPath, long nowUs) => inner.Receive(datagram, remote, ecn, localPath, nowUs);

    public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
    {
        if (!inner.TrySend(buffer, nowUs, out datagram)) return false;
        if (datagram.LocalPath == path) return true;
        sockets.Send(buffer.Slice(0, datagram.Length), datagram);
        datagram = default; // nothing left for this driver's socket; it asks again
        return true;
    }

    public long NextTimeoutUs => inner.NextTimeoutUs;

    public void OnTimeout(long nowUs) => inner.OnTimeout(nowUs);

    public bool HasPendingWork => inner.HasPendingWork;
}
