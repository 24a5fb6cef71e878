using Xunit.Abstractions;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary><see cref="QuicStream.Priority"/> through the public API, over loopback.</summary>
public class StreamPriorityApiTests(ITestOutputHelper output)
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    [Fact]
    public void PriorityValueValidatesAndDefaultsToUrgency3Incremental()
    {
        Assert.Equal(3, QuicStreamPriority.Default.Urgency);
        Assert.True(QuicStreamPriority.Default.Incremental);
        Assert.Equal(QuicStreamPriority.Default, default);
        Assert.Equal(new QuicStreamPriority(3, incremental: true), QuicStreamPriority.Default);
        Assert.NotEqual(new QuicStreamPriority(3, incremental: false), QuicStreamPriority.Default);
        var p = new QuicStreamPriority(7, incremental: false);
        Assert.Equal((7, false), (p.Urgency, p.Incremental));
        Assert.Equal("u=7", p.ToString());
        Assert.Equal("u=0, i", new QuicStreamPriority(0).ToString());
        foreach (int bad in new[] { -1, 8, int.MinValue, int.MaxValue })
        {
            ArgumentOutOfRangeException e = Assert.Throws<ArgumentOutOfRangeException>(() => new QuicStreamPriority(bad));
            Assert.Equal("urgency", e.ParamName);
            Assert.Contains("between 0 (most urgent) and 7 (least urgent)", e.Message);
        }
    }

    /// <summary>
    /// Both providers: a new stream starts at the default priority; the property can be set before, between and after
    /// writes (round-trips; data still flows); setting it on a disposed stream throws ObjectDisposedException.
    /// msquic's provider only stores the value (System.Net.Quic has no priority API).
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task PriorityCanBeSetAtAnyTime(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        Assert.Equal(QuicStreamPriority.Default, stream.Priority);
        stream.Priority = new QuicStreamPriority(0, incremental: false);
        Assert.Equal(new QuicStreamPriority(0, incremental: false), stream.Priority);
        await stream.WriteAsync(new byte[] { 1, 2, 3 }, ct);
        stream.Priority = new QuicStreamPriority(6);
        await stream.WriteAsync(new byte[] { 4, 5 }, completeWrites: true, ct);
        Assert.Equal(new QuicStreamPriority(6), stream.Priority);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        Assert.Equal(QuicStreamPriority.Default, inbound.Priority);
        inbound.Priority = new QuicStreamPriority(1); // a peer's stream has a priority for what we send on it too
        Assert.Equal(new byte[] { 1, 2, 3, 4, 5 }, await ReadToEndAsync(inbound, ct));
        await inbound.WriteAsync(new byte[] { 9 }, completeWrites: true, ct);
        Assert.Equal(new byte[] { 9 }, await ReadToEndAsync(stream, ct));
        await stream.DisposeAsync();
        Assert.Throws<ObjectDisposedException>(() => stream.Priority = QuicStreamPriority.Default);
    });

    /// <summary>
    /// Managed provider: four bulk streams keep the connection busy while a fifth stream sends 512 KB messages. At the
    /// server, counts the bulk bytes that arrive while a message is arriving (between its first and last byte): an
    /// urgency-0 message stream is sent whole once it starts, an equal-priority one shares round-robin with the bulk
    /// streams (about four bulk bytes per message byte). Bytes, not wall time: robust on a loaded machine.
    /// </summary>
    [SkippableFact]
    public async Task UrgentStreamIsNotInterleavedWithBulkStreams()
    {
        // What is measured includes the waits of a message for its stream's credit (the reader's MAX_STREAM_DATA), during
        // which the bulk streams rightly send; on a loaded machine those waits are long and one pair of measurements can
        // cross the bound (about one run in ten here with the cores busy). Up to three pairs are measured: a scheduler
        // that ignored the priority fails all three.
        const int Attempts = 3;
        string results = "";
        bool competed = false;
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            (long Median, long[] All) prioritized = await MeasureInterleaveAsync(new QuicStreamPriority(0));
            (long Median, long[] All) equal = await MeasureInterleaveAsync(QuicStreamPriority.Default);
            string line = $"attempt {attempt}: bulk KB received during each 512 KB message: urgency 0 [{string.Join(", ", prioritized.All.Select(b => b / 1024))}], " +
                $"urgency 3 [{string.Join(", ", equal.All.Select(b => b / 1024))}]";
            output.WriteLine(line);
            results += line + Environment.NewLine;
            // On a loaded machine the bulk writers may not keep their streams busy; then the comparison says nothing.
            if (equal.Median < MessageBytes / 4) continue;
            competed = true;
            // The urgent messages must see at most half the bulk data that messages at the bulk streams' urgency see.
            if (prioritized.Median * 2 <= equal.Median) return;
        }
        Skip.IfNot(competed, $"the bulk streams did not compete in any attempt (equal-priority median below {MessageBytes / 4} bytes): machine too loaded");
        Assert.Fail($"in no attempt did urgency 0 messages see at most half the bulk bytes of urgency 3 ones (medians):{Environment.NewLine}{results}");
    }

    private const int MessageBytes = 512 * 1024;

    private static async Task<(long Median, long[] All)> MeasureInterleaveAsync(QuicStreamPriority messagePriority)
    {
        const int Messages = 11, BulkStreams = 4;
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            CancellationToken ct = timeout.Token;
            using var stopBulk = CancellationTokenSource.CreateLinkedTokenSource(ct);
            long bulkReceived = 0;
            long[] interleave = new long[Messages];
            var messageDone = new SemaphoreSlim(0);
            var readers = new List<Task>();

            // Server: classify each stream by its first byte ('B' bulk, 'M' messages) and read it.
            Task acceptLoop = Task.Run(async () =>
            {
                for (int i = 0; i < BulkStreams + 1; i++)
                {
                    QuicStream s = await server.AcceptInboundStreamAsync(ct);
                    readers.Add(Task.Run(async () =>
                    {
                        byte[] buffer = new byte[256 * 1024];
                        int n = await s.ReadAsync(buffer.AsMemory(0, 1), ct);
                        Assert.Equal(1, n);
                        if (buffer[0] == (byte)'B')
                        {
                            while ((n = await s.ReadAsync(buffer, ct)) > 0) Interlocked.Add(ref bulkReceived, n);
                            return;
                        }
                        long got = 0, startBulk = 0;
                        int message = 0;
                        while (message < Messages && (n = await s.ReadAsync(buffer, ct)) > 0)
                        {
                            if (got % MessageBytes == 0) startBulk = Interlocked.Read(ref bulkReceived);
                            got += n;
                            Assert.True(got <= (message + 1L) * MessageBytes, "the client sends the next message only after this one arrived");
                            if (got == (message + 1L) * MessageBytes)
                            {
                                interleave[message++] = Interlocked.Read(ref bulkReceived) - startBulk;
                                messageDone.Release();
                            }
                        }
                    }, ct));
                }
            }, ct);

            var bulkWriters = new List<Task>();
            for (int i = 0; i < BulkStreams; i++)
            {
                QuicStream s = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
                bulkWriters.Add(Task.Run(async () =>
                {
                    await s.WriteAsync(new byte[] { (byte)'B' }, ct);
                    byte[] chunk = new byte[64 * 1024];
                    try
                    {
                        while (!stopBulk.IsCancellationRequested) await s.WriteAsync(chunk, stopBulk.Token);
                    }
                    catch (OperationCanceledException) when (stopBulk.IsCancellationRequested)
                    {
                    }
                    s.Abort(QuicAbortDirection.Both, 0);
                    await s.DisposeAsync();
                }, ct));
            }

            // Let the bulk streams fill the pipe, then send the messages one at a time.
            await Task.Delay(200, ct);
            await using QuicStream messages = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            messages.Priority = messagePriority;
            await messages.WriteAsync(new byte[] { (byte)'M' }, ct);
            byte[] message = new byte[MessageBytes];
            for (int m = 0; m < Messages; m++)
            {
                await messages.WriteAsync(message, ct);
                await messageDone.WaitAsync(ct);
            }
            stopBulk.Cancel();
            await Task.WhenAll(bulkWriters);
            await acceptLoop;
            long[] sorted = interleave.Order().ToArray();
            return (sorted[Messages / 2], interleave);
        }
    }
}
