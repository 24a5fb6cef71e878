using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Forwards datagrams between one client and a server on loopback, dropping each with probability <c>loss</c> (seeded)
/// and delaying each by <c>delay</c> one way, so API tests see a real round trip and real loss.
/// </summary>
internal sealed class UdpTestRelay : IDisposable
{
    private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private readonly Socket _back = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private readonly IPEndPoint _server;
    private readonly Random _random;
    private readonly double _loss;
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    private EndPoint? _client;
    public int Dropped;
    public int Forwarded;

    /// <summary>Datagrams toward the server still to drop whatever the loss rate (a test sets it to lose one on purpose).</summary>
    public int DropToServer;

    public UdpTestRelay(IPEndPoint server, double loss, int seed, TimeSpan delay = default)
    {
        _server = server;
        _loss = loss;
        _delay = delay;
        _random = new Random(seed);
        _front.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _back.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _ = Task.Run(() => Pump(_front, toServer: true));
        _ = Task.Run(() => Pump(_back, toServer: false));
    }

    public IPEndPoint EndPoint => (IPEndPoint)_front.LocalEndPoint!;

    private async Task Pump(Socket socket, bool toServer)
    {
        byte[] buffer = new byte[65536];
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                SocketReceiveFromResult r = await socket.ReceiveFromAsync(buffer, new IPEndPoint(IPAddress.Any, 0), _stop.Token);
                if (toServer) _client = r.RemoteEndPoint;
                bool drop;
                lock (_random) drop = _random.NextDouble() < _loss;
                if (toServer && Volatile.Read(ref DropToServer) > 0 && Interlocked.Decrement(ref DropToServer) >= 0) drop = true;
                if (drop) { Interlocked.Increment(ref Dropped); continue; }
                Interlocked.Increment(ref Forwarded);
                if (_delay > TimeSpan.Zero)
                {
                    byte[] copy = buffer.AsSpan(0, r.ReceivedBytes).ToArray();
                    _ = ForwardLaterAsync(copy, toServer);
                    continue;
                }
                await ForwardAsync(buffer.AsMemory(0, r.ReceivedBytes), toServer);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    private async Task ForwardLaterAsync(byte[] datagram, bool toServer)
    {
        try
        {
            await Task.Delay(_delay, _stop.Token);
            await ForwardAsync(datagram, toServer);
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
    }

    private ValueTask<int> ForwardAsync(ReadOnlyMemory<byte> datagram, bool toServer)
        => toServer ? _back.SendToAsync(datagram, _server) : _client is { } client ? _front.SendToAsync(datagram, client) : ValueTask.FromResult(0);

    public void Dispose()
    {
        _stop.Cancel();
        _front.Dispose();
        _back.Dispose();
    }
}
