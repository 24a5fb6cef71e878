using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// One client's NAT on loopback: forwards the client's datagrams to the server from an upstream socket, and the server's
/// replies back. <see cref="Rebind"/> moves to a new upstream socket (a new source port, as a NAT rebinding does) while
/// the old ones keep passing replies back.
/// </summary>
internal sealed class RebindingUdpRelay : IDisposable
{
    private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private readonly List<Socket> _upstreams = new();
    private readonly IPEndPoint _server;
    private readonly CancellationTokenSource _stop = new();
    private volatile Socket _current;
    private volatile EndPoint? _client;

    public RebindingUdpRelay(IPEndPoint server)
    {
        _server = server;
        _front.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _current = NewUpstream();
        _ = Task.Run(PumpToServer);
    }

    public IPEndPoint EndPoint => (IPEndPoint)_front.LocalEndPoint!;

    /// <summary>The source address the server sees now.</summary>
    public IPEndPoint UpstreamEndPoint => (IPEndPoint)_current.LocalEndPoint!;

    public int Rebinds { get; private set; }

    /// <summary>From now on the client's datagrams reach the server from a new port.</summary>
    public void Rebind()
    {
        _current = NewUpstream();
        Rebinds++;
    }

    private Socket NewUpstream()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        lock (_upstreams) _upstreams.Add(socket);
        _ = Task.Run(() => PumpToClient(socket));
        return socket;
    }

    private async Task PumpToServer()
    {
        byte[] buffer = new byte[65536];
        EndPoint any = new IPEndPoint(IPAddress.Any, 0);
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                SocketReceiveFromResult r = await _front.ReceiveFromAsync(buffer, SocketFlags.None, any, _stop.Token);
                _client = r.RemoteEndPoint;
                await _current.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), SocketFlags.None, _server, _stop.Token);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    private async Task PumpToClient(Socket upstream)
    {
        byte[] buffer = new byte[65536];
        EndPoint any = new IPEndPoint(IPAddress.Any, 0);
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                SocketReceiveFromResult r = await upstream.ReceiveFromAsync(buffer, SocketFlags.None, any, _stop.Token);
                if (_client is { } client) await _front.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), SocketFlags.None, client, _stop.Token);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _front.Dispose();
        lock (_upstreams)
        {
            foreach (Socket socket in _upstreams) socket.Dispose();
        }
    }
}
