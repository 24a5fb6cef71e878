using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

/// <summary>
/// A UDP relay on loopback between a client and a server that records every datagram it forwards, as a capture on the
/// wire between them would: the client talks to <see cref="EndPoint"/>, the server sees the relay. Each client address
/// gets its own upstream socket (a NAT mapping), so a client that migrates or rebinds reaches the server from a new
/// address too. <see cref="Server"/> can be changed (a restarted server on another port).
/// </summary>
internal sealed class CaptureRelay : IDisposable
{
    private readonly Socket _front;
    private readonly Dictionary<IPEndPoint, Socket> _upstreams = new();
    private readonly CaptureFile _capture;
    private readonly CancellationTokenSource _stop = new();

    public CaptureRelay(IPEndPoint server, CaptureFile capture)
    {
        Server = server;
        _capture = capture;
        _front = Bind();
        EndPoint = (IPEndPoint)_front.LocalEndPoint!;
        _ = Task.Run(FrontLoop);
    }

    public IPEndPoint EndPoint { get; }

    public IPEndPoint Server { get; set; }

    /// <summary>Holds each server datagram this long before passing it on (recorded when passed on): a longer round trip,
    /// e.g. so a client's first flight is out, 0-RTT included, before the server's answer arrives.</summary>
    public TimeSpan ServerDelay { get; set; }

    /// <summary>Client addresses seen so far.</summary>
    public int ClientAddresses
    {
        get
        {
            lock (_upstreams) return _upstreams.Count;
        }
    }

    private static Socket Bind()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp) { ReceiveBufferSize = 4 << 20, SendBufferSize = 4 << 20 };
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return socket;
    }

    /// <summary>Receives on <paramref name="socket"/> until disposal; a SocketException (an ICMP port unreachable
    /// from an end that went away) does not stop it.</summary>
    private async Task ReceiveLoop(Socket socket, Action<IPEndPoint, byte[], int> onDatagram)
    {
        byte[] buffer = new byte[65536];
        while (!_stop.IsCancellationRequested)
        {
            SocketReceiveFromResult r;
            try
            {
                r = await socket.ReceiveFromAsync(buffer, SocketFlags.None, new IPEndPoint(IPAddress.Any, 0), _stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                if (_stop.IsCancellationRequested || e is not SocketException) return;
                continue;
            }

            onDatagram((IPEndPoint)r.RemoteEndPoint, buffer, r.ReceivedBytes);
        }
    }

    private Task FrontLoop() => ReceiveLoop(_front, (client, buffer, length) =>
    {
        Socket? upstream;
        lock (_upstreams)
        {
            if (!_upstreams.TryGetValue(client, out upstream))
            {
                upstream = Bind();
                _upstreams.Add(client, upstream);
                Socket bound = upstream;
                _ = Task.Run(() => ReceiveLoop(bound, (_, b, n) => FromServer(client, b, n)));
            }
        }

        _capture.Add(client, EndPoint, buffer.AsSpan(0, length));
        try
        {
            upstream.SendTo(buffer.AsSpan(0, length), Server);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
    });

    private void FromServer(IPEndPoint client, byte[] buffer, int length)
    {
        if (ServerDelay > TimeSpan.Zero)
        {
            byte[] held = buffer.AsSpan(0, length).ToArray();
            _ = Task.Delay(ServerDelay).ContinueWith(_ => PassOn(client, held), TaskScheduler.Default);
            return;
        }

        PassOn(client, buffer.AsSpan(0, length));
    }

    private void PassOn(IPEndPoint client, ReadOnlySpan<byte> datagram)
    {
        if (_stop.IsCancellationRequested) return;
        _capture.Add(EndPoint, client, datagram);
        try
        {
            _front.SendTo(datagram, client);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _front.Dispose();
        lock (_upstreams)
        {
            foreach (Socket s in _upstreams.Values) s.Dispose();
        }
    }
}
