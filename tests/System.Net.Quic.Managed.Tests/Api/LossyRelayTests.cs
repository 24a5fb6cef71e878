namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The public API through a lossy UDP relay on loopback (seeded drops in both directions): many small request/response
/// exchanges, each on a fresh stream, must all complete. The link study saw such exchanges stall.
/// </summary>
public class LossyRelayTests
{
    [Theory]
    [InlineData(0.05, 1)]
    [InlineData(0.05, 2)]
    public async Task SmallExchangesCompleteThroughALossyRelay(double loss, int seed)
    {
        await using QuicListener listener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback);
        using var relay = new UdpTestRelay(listener.LocalEndPoint, loss, seed);
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
