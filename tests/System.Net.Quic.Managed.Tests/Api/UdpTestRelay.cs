using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Forwards datagrams between clients and a server on loopback, dropping each with probability <c>loss</c> (seeded)
/// and delaying each by <c>delay</c> one way, so API tests see a real round trip and real loss. Each client address gets
/// its own socket toward the server (as a NAT would): a closed connection still in its closing period, repeating its
/// CONNECTION_CLOSE, does not steal the replies meant for the next connection.
/// </summary>
internal sealed class UdpTestRelay : IDisposable
{
    private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private readonly System.Collections.Concurrent.ConcurrentDictionary<EndPoint, Socket> _backs = new();
    private volatile IPEndPoint _server;
    private readonly Random _random;
    private readonly double _loss;
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    public int Dropped;
    public int Forwarded;

    /// <summary>Datagrams toward the server still to drop whatever the loss rate (a test sets it to lose one on purpose).</summary>
    public int DropToServer;

    /// <summary>While set, a copy of every datagram toward the server is added to it (what a replay attack records).</summary>
    public volatile System.Collections.Concurrent.ConcurrentQueue<byte[]>? RecordToServer;

    /// <summary>While set, every datagram is dropped both ways: the path (or the peer) is gone.</summary>
    public volatile bool Blackhole;

    /// <summary>
    /// Where datagrams from clients go; a test moves it to another server (a server that restarted elsewhere), and from
    /// then on nothing the old one sends gets through.
    /// </summary>
    public IPEndPoint Server
    {
        get => _server;
        set => _server = value;
    }

    public UdpTestRelay(IPEndPoint server, double loss, int seed, TimeSpan delay = default)
    {
        _server = server;
        _loss = loss;
        _delay = delay;
        _random = new Random(seed);
        _front.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _ = Task.Run(() => Pump(_front, null));
    }

    /// <summary>The socket that forwards <paramref name="client"/>'s datagrams to the server (and pumps the replies back).</summary>
    private Socket BackFor(EndPoint client)
    {
        if (_backs.TryGetValue(client, out Socket? back)) return back;
        back = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        back.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        if (!_backs.TryAdd(client, back))
        {
            back.Dispose();
            return _backs[client];
        }
        _ = Task.Run(() => Pump(back, client));
        return back;
    }

    public IPEndPoint EndPoint => (IPEndPoint)_front.LocalEndPoint!;

    /// <summary>Pumps the front socket (<paramref name="client"/> null: toward the server) or one client's back socket.</summary>
    private async Task Pump(Socket socket, EndPoint? client)
    {
        bool toServer = client is null;
        byte[] buffer = new byte[65536];
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                SocketReceiveFromResult r = await socket.ReceiveFromAsync(buffer, new IPEndPoint(IPAddress.Any, 0), _stop.Token);
                EndPoint peer = toServer ? r.RemoteEndPoint : client!;
                bool drop;
                lock (_random) drop = _random.NextDouble() < _loss;
                if (toServer && Volatile.Read(ref DropToServer) > 0 && Interlocked.Decrement(ref DropToServer) >= 0) drop = true;
                // Replies from anything but the current server (one that was replaced) are dropped, as a NAT would.
                if (!toServer && !r.RemoteEndPoint.Equals(_server)) drop = true;
                if (drop || Blackhole) { Interlocked.Increment(ref Dropped); continue; }
                if (toServer) RecordToServer?.Enqueue(buffer.AsSpan(0, r.ReceivedBytes).ToArray());
                Interlocked.Increment(ref Forwarded);
                if (_delay > TimeSpan.Zero)
                {
                    byte[] copy = buffer.AsSpan(0, r.ReceivedBytes).ToArray();
                    _ = ForwardLaterAsync(copy, toServer, peer);
                    continue;
                }
                await ForwardAsync(buffer.AsMemory(0, r.ReceivedBytes), toServer, peer);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    private async Task ForwardLaterAsync(byte[] datagram, bool toServer, EndPoint client)
    {
        try
        {
            await Task.Delay(_delay, _stop.Token);
            await ForwardAsync(datagram, toServer, client);
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    private ValueTask<int> ForwardAsync(ReadOnlyMemory<byte> datagram, bool toServer, EndPoint client)
        => toServer ? BackFor(client).SendToAsync(datagram, _server) : _front.SendToAsync(datagram, client);

    public void Dispose()
    {
        _stop.Cancel();
        _front.Dispose();
        foreach (Socket back in _backs.Values) back.Dispose();
    }
}
