using System.Net.Quic.Managed;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The public API through a lossy UDP relay on loopback (seeded drops in both directions): many small request/response
/// exchanges, each on a fresh stream, must all complete. The link study saw such exchanges stall.
/// </summary>
public class LossyRelayTests
{
    /// <summary>Forwards datagrams between one client and a server, dropping each with probability <c>loss</c>.</summary>
    private sealed class LossyUdpRelay : IDisposable
    {
        private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly Socket _back = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly IPEndPoint _server;
        private readonly Random _random;
        private readonly double _loss;
        private readonly CancellationTokenSource _stop = new();
        private EndPoint? _client;
        public int Dropped;

        public LossyUdpRelay(IPEndPoint server, double loss, int seed)
        {
            _server = server;
            _loss = loss;
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
                    if (drop) { Interlocked.Increment(ref Dropped); continue; }
                    if (toServer) await _back.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), _server);
                    else if (_client is not null) await _front.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), _client);
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
            _back.Dispose();
        }
    }

    [Theory]
    [InlineData(0.05, 1)]
    [InlineData(0.05, 2)]
    public async Task SmallExchangesCompleteThroughALossyRelay(double loss, int seed)
    {
        await using QuicListener listener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback);
        using var relay = new LossyUdpRelay(listener.LocalEndPoint, loss, seed);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        QuicClientConnectionOptions options = QuicApiTestEnvironment.ClientOptions(relay.EndPoint);
        Task<QuicConnection> accept = listener.AcceptConnectionAsync(timeout.Token).AsTask();
        await using QuicConnection client = await QuicConnection.ConnectAsync(options, timeout.Token);
        await using QuicConnection server = await accept;

        Task serve = Task.Run(async () =>
        {
            for (int i = 0; i < 40; i++)
            {
                await using QuicStream s = await server.AcceptInboundStreamAsync(timeout.Token);
                byte[] request = new byte[1024];
                int total = 0;
                while (total < request.Length)
                {
                    int n = await s.ReadAsync(request.AsMemory(total), timeout.Token);
                    if (n == 0) break;
                    total += n;
                }
                await s.WriteAsync(request.AsMemory(0, total), completeWrites: true, timeout.Token);
                await s.WritesClosed.WaitAsync(timeout.Token);
            }
        });
        var times = new List<double>();
        for (int i = 0; i < 40; i++)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            await using QuicStream s = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await s.WriteAsync(new byte[1024], completeWrites: true, timeout.Token);
            byte[] reply = new byte[2048];
            int total = 0;
            while (true)
            {
                using var perExchange = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
                perExchange.CancelAfter(TimeSpan.FromSeconds(15));
                int n = await s.ReadAsync(reply.AsMemory(total), perExchange.Token);
                if (n == 0) break;
                total += n;
            }
            Assert.Equal(1024, total);
            times.Add(watch.Elapsed.TotalMilliseconds);
        }
        await serve.WaitAsync(timeout.Token);
        Assert.True(relay.Dropped > 0, "the relay dropped nothing: the test did not exercise loss");
    }
}
