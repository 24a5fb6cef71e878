using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Tests.Streams;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// What a stream blocked on a slow reader costs through the public API, both layers (the bridge's stream, its write
/// request and cancellation registration, the public <see cref="QuicStream"/>, and the core's stream), on a loopback
/// pair: a client with 2,048-byte stream windows opens N streams and sends a 7-byte request with FIN on each, never
/// reading; the server accepts each, reads the request to its end and starts a 1 MiB write, which stays pending. The
/// live heap both ends hold is measured after full collections (a memory bound, not a timing) with N and with 2N such
/// streams; the difference per stream is what a stream costs (the client's 256 KiB connection window is used up by the
/// first N, so the next N receive no data: they hold stream state only, as most of an attacker's streams do). No
/// application state machine is kept per stream (the writes are kept as ValueTasks in arrays allocated beforehand). Measured 2,224-2,228 B per
/// stream, both ends and layers together (`dotnet test tests/System.Net.Quic.Managed.Tests -c Release --filter
/// BlockedStreamApiMemoryTests`), less within the full suite. Runs alone.
/// </summary>
[Collection(nameof(HeapMeasurementCollection))]
public class BlockedStreamApiMemoryTests(ITestOutputHelper output)
{
    private const int StreamCount = 1000;

    /// <summary>The bound on what a blocked stream holds, both ends and both layers together.</summary>
    private const long MaxBytesPerStream = 2_600;

    [Fact]
    public async Task BlockedStreamsCostAFewHundredBytesEachOnBothLayers()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed, configure: o => o.MaxInboundBidirectionalStreams = 2 * StreamCount);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.InitialReceiveWindowSizes = new QuicReceiveWindowSizes
        {
            Connection = 256 * 1024,
            LocallyInitiatedBidirectionalStream = 2048,
            RemotelyInitiatedBidirectionalStream = 2048,
            UnidirectionalStream = 2048,
        };
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener, options);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var clientStreams = new QuicStream[2 * StreamCount];
        var serverStreams = new QuicStream[2 * StreamCount];
        var writes = new ValueTask[2 * StreamCount];
        byte[] request = "GET /1M"u8.ToArray();
        byte[] response = new byte[1024 * 1024];
        byte[] readBuffer = new byte[256];
        try
        {
            async Task OpenBlockedAsync(int from, int to)
            {
                for (int i = from; i < to; i++)
                {
                    clientStreams[i] = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
                    await clientStreams[i].WriteAsync(request, completeWrites: true, timeout.Token);
                    QuicStream stream = serverStreams[i] = await server.AcceptInboundStreamAsync(timeout.Token);
                    int total = 0, n;
                    while ((n = await stream.ReadAsync(readBuffer, timeout.Token)) > 0) total += n;
                    Assert.Equal(request.Length, total);
                    writes[i] = stream.WriteAsync(response, timeout.Token);
                }
                await Task.Delay(1000, timeout.Token); // the windows fill, the acknowledgments come back
            }

            // The difference between N and 2N blocked streams on one pair: what the process held before (other tests'
            // connections closing, pools) and the server's send chunks (its budget, reached with the first N) cancel out.
            await OpenBlockedAsync(0, StreamCount);
            long before = await SettledHeapAsync(timeout.Token);
            await OpenBlockedAsync(StreamCount, 2 * StreamCount);
            long after = await SettledHeapAsync(timeout.Token);
            Assert.All(writes, w => Assert.False(w.IsCompleted));
            long perStream = (after - before) / StreamCount;
            output.WriteLine($"heap +{after - before} B for {StreamCount} more blocked streams on both ends and layers: {perStream} B per stream");
            GC.KeepAlive(clientStreams);
            GC.KeepAlive(serverStreams);
            // An upper bound only: in the full suite what earlier tests left behind may still be released between the two
            // measurements (pools trimmed at a full collection), which lowers the figure (1,307 B in one such run).
            Assert.True(perStream <= MaxBytesPerStream, $"{perStream} B per stream, bound {MaxBytesPerStream} B");
        }
        finally
        {
            await client.DisposeAsync();
            foreach (ValueTask write in writes)
            {
                try
                {
                    await write;
                }
                catch (Exception)
                {
                    // The connection ended under the pending write.
                }
            }
            await server.DisposeAsync();
        }
    }

    /// <summary>
    /// The live heap once two measurements half a second apart agree within 64 KiB: what earlier tests of the process
    /// left behind (connections closing, drivers stopping) is gone by then.
    /// </summary>
    private static async Task<long> SettledHeapAsync(CancellationToken cancellationToken)
    {
        long last = HeapMeasurement.LiveBytes();
        for (int i = 0; i < 40; i++)
        {
            await Task.Delay(500, cancellationToken);
            long now = HeapMeasurement.LiveBytes();
            if (Math.Abs(now - last) < 64 * 1024) return now;
            last = now;
        }
        return last;
    }
}
