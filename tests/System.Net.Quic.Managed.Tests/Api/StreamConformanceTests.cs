using System.Collections.Concurrent;
using System.Diagnostics;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Stream and connection API semantics of System.Net.Quic over msquic, for each provider: what a cancelled write does
/// to the write side, reads of buffered data completing synchronously, zero-byte reads waiting for data, the stream
/// capacity callback, disposal and close with pending or cancelled calls, and how promptly pending calls end.
/// </summary>
public class StreamConformanceTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static CancellationToken Timeout(int seconds = 20) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    /// <summary>A client stream whose first byte the server read: both ends exist.</summary>
    private static async Task<(QuicStream Client, QuicStream Server)> OpenPairAsync(QuicConnection client, QuicConnection server, CancellationToken ct)
    {
        QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await outbound.WriteAsync(new byte[] { 42 }, ct);
        QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        Assert.Equal(1, await inbound.ReadAsync(new byte[1], ct));
        return (outbound, inbound);
    }

    /// <summary>Reads (discarding) until a read fails; returns its exception (bounded by <paramref name="ct"/>).</summary>
    private static async Task<QuicException> ReadUntilFailureAsync(QuicStream stream, CancellationToken ct)
    {
        byte[] buffer = new byte[64 * 1024];
        return await Assert.ThrowsAsync<QuicException>(async () =>
        {
            while (true)
            {
                if (await stream.ReadAsync(buffer, ct) == 0) await Task.Delay(10, ct);
            }
        });
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task PreCancelledWriteAbortsTheWriteSide(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            using var cancelled = new CancellationTokenSource();
            cancelled.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await outbound.WriteAsync(new byte[10], cancelled.Token));
            QuicException next = await Assert.ThrowsAsync<QuicException>(async () => await outbound.WriteAsync(new byte[10], ct));
            Assert.Equal(QuicError.OperationAborted, next.QuicError);
            // RESET_STREAM with the client's DefaultStreamErrorCode (0x0C).
            QuicException peer = await ReadUntilFailureAsync(inbound, ct);
            Assert.Equal(QuicError.StreamAborted, peer.QuicError);
            Assert.Equal(0x0C, peer.ApplicationErrorCode);
        }
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task WriteCancelledWhileBlockedOnFlowControlAbortsTheWriteSide(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            using var cts = new CancellationTokenSource();
            Task write = await StartBlockedWriteAsync(outbound, cts.Token, ct);
            cts.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await write);
            QuicException next = await Assert.ThrowsAsync<QuicException>(async () => await outbound.WriteAsync(new byte[10], ct));
            Assert.Equal(QuicError.OperationAborted, next.QuicError);
            QuicException peer = await ReadUntilFailureAsync(inbound, ct);
            Assert.Equal(QuicError.StreamAborted, peer.QuicError);
            Assert.Equal(0x0C, peer.ApplicationErrorCode);
        }
    });

    /// <summary>
    /// Writes 1 MiB at a time (the peer reads nothing) until a write stays pending: blocked on flow control and the send
    /// buffer (msquic completes a write once it buffered it, so a single large write may not block). Returns that
    /// pending write.
    /// </summary>
    private static async Task<Task> StartBlockedWriteAsync(QuicStream stream, CancellationToken token, CancellationToken ct)
    {
        byte[] chunk = new byte[1024 * 1024];
        for (int i = 0; i < 256; i++)
        {
            Task write = stream.WriteAsync(chunk, token).AsTask();
            if (await Task.WhenAny(write, Task.Delay(200, ct)) != write) return write;
            await write;
        }
        throw new Xunit.Sdk.XunitException("256 MiB were written without the peer reading: writes never blocked");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task PreCancelledReadAbortsTheReadSide(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            using var cancelled = new CancellationTokenSource();
            cancelled.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => _ = await inbound.ReadAsync(new byte[10], cancelled.Token));
            QuicException next = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(new byte[10], ct));
            Assert.Equal(QuicError.OperationAborted, next.QuicError);
            // STOP_SENDING with the server's DefaultStreamErrorCode (0x0A): the client's writes fail.
            QuicException peer = await Assert.ThrowsAsync<QuicException>(async () =>
            {
                for (int i = 0; i < 1000; i++)
                {
                    await outbound.WriteAsync(new byte[1000], ct);
                    await Task.Delay(5, ct);
                }
            });
            Assert.Equal(QuicError.StreamAborted, peer.QuicError);
            Assert.Equal(0x0A, peer.ApplicationErrorCode);
        }
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task PreCancelledCallsOnFinishedSidesOnlyThrow(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await outbound.WriteAsync(new byte[] { 1 }, completeWrites: true, ct);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        Assert.Equal(new byte[] { 1 }, await ReadToEndAsync(inbound, ct));
        await inbound.ReadsClosed.WaitAsync(ct);
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();
        // The read side is over (FIN read): the cancelled read throws without aborting anything.
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => _ = await inbound.ReadAsync(new byte[10], cancelled.Token));
        Assert.Equal(0, await inbound.ReadAsync(new byte[10], ct));
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ReadsOfBufferedDataCompleteSynchronously(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        byte[] payload = new byte[1000];
        Random.Shared.NextBytes(payload);
        await outbound.WriteAsync(payload, completeWrites: true, ct);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        byte[] received = new byte[1000];
        Assert.Equal(1, await inbound.ReadAsync(received.AsMemory(0, 1), ct));
        await Task.Delay(200, ct); // everything, FIN included, has arrived by now
        int total = 1;
        for (int i = 0; i < 3; i++)
        {
            ValueTask<int> read = inbound.ReadAsync(received.AsMemory(total, 333), ct);
            Assert.True(read.IsCompleted, $"read {i} of buffered data did not complete synchronously");
            total += await read;
        }
        Assert.Equal(1000, total);
        Assert.Equal(payload, received);
        ValueTask<int> end = inbound.ReadAsync(received, ct);
        Assert.True(end.IsCompleted, "the read of a buffered FIN did not complete synchronously");
        Assert.Equal(0, await end);
        await inbound.ReadsClosed.WaitAsync(ct);
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ZeroByteReadWaitsForData(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            ValueTask<int> zero = inbound.ReadAsync(Memory<byte>.Empty, ct);
            await Task.Delay(200, ct);
            Assert.False(zero.IsCompleted, "a zero-byte read with nothing buffered completed at once");
            await outbound.WriteAsync(new byte[] { 1, 2, 3, 4, 5 }, ct);
            Assert.Equal(0, await zero.AsTask().WaitAsync(ct));
            // The data is there now: a zero-byte read returns at once, and the data is still there to read.
            ValueTask<int> again = inbound.ReadAsync(Memory<byte>.Empty, ct);
            Assert.True(again.IsCompleted);
            Assert.Equal(0, await again);
            byte[] buffer = new byte[10];
            Assert.Equal(5, await inbound.ReadAsync(buffer, ct));
            // Waiting for the FIN.
            ValueTask<int> fin = inbound.ReadAsync(Memory<byte>.Empty, ct);
            await Task.Delay(100, ct);
            Assert.False(fin.IsCompleted);
            outbound.CompleteWrites();
            Assert.Equal(0, await fin.AsTask().WaitAsync(ct));
            Assert.Equal(0, await inbound.ReadAsync(buffer, ct));
            await inbound.ReadsClosed.WaitAsync(ct);
        }
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task DataBufferedBeforeThePeerClosedIsStillRead(string provider) => DataBufferedBeforeThePeerClosedAsync(provider, fin: false);

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task DataAndFinBufferedBeforeThePeerClosedAreStillRead(string provider) => DataBufferedBeforeThePeerClosedAsync(provider, fin: true);

    private static Task DataBufferedBeforeThePeerClosedAsync(string provider, bool fin) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await outbound.WriteAsync(new byte[] { 1, 2, 3, 4, 5 }, completeWrites: fin, ct);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        await Task.Delay(200, ct); // the bytes are in the server's buffer
        await client.CloseAsync(9, ct);
        QuicException ended = await Assert.ThrowsAsync<QuicException>(async () => await server.AcceptInboundStreamAsync(ct));
        Assert.Equal(QuicError.ConnectionAborted, ended.QuicError);
        // On both providers ReadsClosed faults with the close at once, bytes still buffered or not.
        QuicException readsClosed = await Assert.ThrowsAsync<QuicException>(async () => await inbound.ReadsClosed.WaitAsync(ct));
        Assert.Equal(QuicError.ConnectionAborted, readsClosed.QuicError);
        Assert.Equal(9, readsClosed.ApplicationErrorCode);
        byte[] buffer = new byte[10];
        if (provider == "msquic")
        {
            // msquic drops what was buffered: the read fails at once. The managed provider deliberately keeps it
            // readable (docs/ARCHITECTURE.md, "Differences from msquic").
            QuicException dropped = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(buffer, ct));
            Assert.Equal(QuicError.ConnectionAborted, dropped.QuicError);
            return;
        }
        Assert.Equal(5, await inbound.ReadAsync(buffer, ct));
        if (fin)
        {
            Assert.Equal(0, await inbound.ReadAsync(buffer, ct));
            return;
        }
        QuicException e = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(buffer, ct));
        Assert.Equal(QuicError.ConnectionAborted, e.QuicError);
        Assert.Equal(9, e.ApplicationErrorCode);
    });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task StreamCapacityCallbackReportsEachIncrease(string provider)
    {
        var increments = new System.Collections.Concurrent.ConcurrentQueue<(int Bidi, int Uni)>();
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await WithConnectedPairAsync(provider, async (client, server, ct) =>
        {
            await WaitUntilAsync(() => !increments.IsEmpty, ct);
            Assert.True(increments.TryPeek(out var initial));
            Assert.Equal((4, 3), initial);

            // One stream used to its end on both sides: the server gives its credit back (MAX_STREAMS), +1.
            await using (QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct))
            {
                await stream.WriteAsync(new byte[] { 1 }, completeWrites: true, ct);
                await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
                await ReadToEndAsync(inbound, ct);
                await inbound.WriteAsync(new byte[] { 2 }, completeWrites: true, ct);
                await ReadToEndAsync(stream, ct);
                await inbound.WritesClosed.WaitAsync(ct);
            }
            await second.Task.WaitAsync(ct);
            Assert.Equal(new[] { (4, 3), (1, 0) }, increments.ToArray());
        },
        configureServer: o =>
        {
            o.MaxInboundBidirectionalStreams = 4; // not 2: one stream back is then less than half the limit
            o.MaxInboundUnidirectionalStreams = 3;
        },
        configureClient: o => o.StreamCapacityCallback = (_, args) =>
        {
            increments.Enqueue((args.BidirectionalIncrement, args.UnidirectionalIncrement));
            if (increments.Count >= 2) second.TrySetResult();
        });
    }

    private static async Task WaitUntilAsync(Func<bool> condition, CancellationToken ct)
    {
        while (!condition()) await Task.Delay(10, ct);
    }

    /// <summary>
    /// Opens from several threads at once, well past the peer's limit of 4: some open at once (on the caller's thread in
    /// the managed provider), the rest wait for the limit. Every stream must get a distinct ID of its type, in the range
    /// the limit allows, and the peer must see the same ID with that stream's own bytes.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ConcurrentOpensAcrossThePeerLimitKeepIdsAndDataTogether(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        const int Streams = 48;
        var serverSide = Task.Run(async () =>
        {
            var seen = new Dictionary<long, long>();
            for (int i = 0; i < Streams; i++)
            {
                await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
                byte[] body = await ReadToEndAsync(inbound, ct);
                seen[inbound.Id] = BitConverter.ToInt64(body);
                await inbound.WriteAsync(body, completeWrites: true, ct);
            }
            return seen;
        }, ct);
        var clientIds = new ConcurrentBag<long>();
        await Parallel.ForEachAsync(Enumerable.Range(0, Streams), new ParallelOptions { MaxDegreeOfParallelism = 6, CancellationToken = ct }, async (_, token) =>
        {
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, token);
            clientIds.Add(stream.Id);
            await stream.WriteAsync(BitConverter.GetBytes(stream.Id), completeWrites: true, token);
            Assert.Equal(stream.Id, BitConverter.ToInt64(await ReadToEndAsync(stream, token)));
        });
        Dictionary<long, long> seen = await serverSide;
        long[] ids = clientIds.Order().ToArray();
        Assert.Equal(Enumerable.Range(0, Streams).Select(i => (long)i * 4), ids); // client-initiated bidirectional: 0, 4, 8, ...
        Assert.All(seen, pair => Assert.Equal(pair.Key, pair.Value));
        Assert.Equal(Streams, seen.Count);
    },
    configureServer: o => o.MaxInboundBidirectionalStreams = 4);

    /// <summary>
    /// A stream aborted or disposed right after it was opened (before the managed driver has registered it) must still
    /// end cleanly on both sides, and the connection must go on carrying data afterwards.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task StreamsAbortedOrDisposedRightAfterOpeningLeaveTheConnectionWorking(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var accepting = Task.Run(async () =>
        {
            while (!ct.IsCancellationRequested)
            {
                QuicStream inbound;
                try
                {
                    inbound = await server.AcceptInboundStreamAsync(ct);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                _ = Task.Run(async () =>
                {
                    await using (inbound)
                    {
                        try
                        {
                            byte[] body = await ReadToEndAsync(inbound, ct);
                            await inbound.WriteAsync(body, completeWrites: true, ct);
                        }
                        catch (QuicException)
                        {
                            // The client aborted this one.
                        }
                    }
                }, ct);
            }
        }, ct);
        for (int i = 0; i < 60; i++)
        {
            QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            switch (i % 3)
            {
                case 0:
                    stream.Abort(QuicAbortDirection.Both, 7);
                    await stream.DisposeAsync();
                    break;
                case 1:
                    await stream.WriteAsync(new byte[100], ct);
                    stream.Abort(QuicAbortDirection.Write, 8);
                    await stream.DisposeAsync();
                    break;
                default:
                    await stream.DisposeAsync(); // FIN without data; the read side aborted
                    break;
            }
        }
        // The connection still works: a normal request/response on a new stream.
        await using QuicStream last = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await last.WriteAsync(new byte[] { 1, 2, 3 }, completeWrites: true, ct);
        Assert.Equal(new byte[] { 1, 2, 3 }, await ReadToEndAsync(last, ct));
    },
    configureServer: o => o.MaxInboundBidirectionalStreams = 8);

    /// <summary>
    /// Opens racing the connection's close: each open either fails with the close's exception or gives a stream whose
    /// operations fail with it; none waits past the close.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task OpensRacingTheConnectionCloseEndPromptly(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var openers = Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
        {
            int failures = 0;
            while (failures == 0)
            {
                try
                {
                    await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
                    await stream.WriteAsync(new byte[10], completeWrites: true, ct);
                }
                catch (QuicException)
                {
                    failures++;
                }
                catch (ObjectDisposedException)
                {
                    failures++;
                }
            }
        }, ct)).ToArray();
        await Task.Delay(50, ct);
        await client.CloseAsync(5, ct);
        // Every opener sees the close within the test's token (20 s); in practice at once.
        await Task.WhenAll(openers).WaitAsync(TimeSpan.FromSeconds(10), ct);
    },
    configureServer: o => o.MaxInboundBidirectionalStreams = 1000);

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task DisposingTheConnectionFailsAPendingOpenWithObjectDisposed(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream first = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        ValueTask<QuicStream> pending = client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await Task.Delay(100, ct);
        Assert.False(pending.IsCompleted);
        await client.DisposeAsync();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await pending);
    },
    configureServer: o => o.MaxInboundBidirectionalStreams = 1);

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task CloseAsyncWithACancelledTokenThrowsAndStillCloses(string provider)
    {
        // Repeated: whether the call completes must not depend on a race with the driver thread.
        for (int i = 0; i < 5; i++)
        {
            await WithConnectedPairAsync(provider, async (client, server, ct) =>
            {
                using var cancelled = new CancellationTokenSource();
                cancelled.Cancel();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await client.CloseAsync(7, cancelled.Token));
                QuicException e = await Assert.ThrowsAsync<QuicException>(async () => await server.AcceptInboundStreamAsync(ct));
                Assert.Equal(QuicError.ConnectionAborted, e.QuicError);
                Assert.Equal(7, e.ApplicationErrorCode);
            });
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task CloseAsyncWithACancelledTokenAfterTheCloseCompletedSucceeds(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await client.CloseAsync(7, ct);
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();
        // As msquic: nothing is left to wait for, so the token is not looked at.
        await client.CloseAsync(8, cancelled.Token);
        QuicException e = await Assert.ThrowsAsync<QuicException>(async () => await server.AcceptInboundStreamAsync(ct));
        Assert.Equal(7, e.ApplicationErrorCode);
    });

    public static TheoryData<string, string, string> PendingCalls()
    {
        var data = new TheoryData<string, string, string>();
        foreach (string provider in new[] { "managed", "msquic" })
        {
            foreach (string call in new[] { "read", "write", "accept", "open" })
            {
                foreach (string ending in new[] { "cancel", "peer-close", "local-close" })
                {
                    data.Add(provider, call, ending);
                }
            }
        }
        return data;
    }

    /// <summary>
    /// A pending ReadAsync, WriteAsync, AcceptInboundStreamAsync or OpenOutboundStreamAsync ends promptly when its token is
    /// cancelled, when the peer closes the connection and when the app closes it: within 2 s, far from the 30 s idle
    /// timeout that would end it if the trigger were lost, with room for a machine whose threads wait for a core.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(PendingCalls))]
    public Task PendingCallEndsPromptly(string provider, string call, string ending) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        using var cts = new CancellationTokenSource();
        QuicStream? stream = null;
        try
        {
            Task pending;
            switch (call)
            {
                case "read":
                    (stream, _) = await OpenPairAsync(client, server, ct);
                    pending = stream.ReadAsync(new byte[100], cts.Token).AsTask();
                    break;
                case "write":
                    (stream, _) = await OpenPairAsync(client, server, ct);
                    pending = await StartBlockedWriteAsync(stream, cts.Token, ct);
                    break;
                case "accept":
                    pending = client.AcceptInboundStreamAsync(cts.Token).AsTask();
                    break;
                default:
                    stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
                    pending = client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cts.Token).AsTask();
                    break;
            }
            await Task.Delay(200, ct);
            Assert.False(pending.IsCompleted, $"{call} did not wait");
            var watch = Stopwatch.StartNew();
            Task trigger = ending switch
            {
                "cancel" => cts.CancelAsync(),
                "peer-close" => server.CloseAsync(5, ct).AsTask(),
                _ => client.CloseAsync(6, ct).AsTask(),
            };
            Exception e = await Assert.ThrowsAnyAsync<Exception>(() => pending.WaitAsync(ct));
            TimeSpan elapsed = watch.Elapsed;
            await trigger;
            if (ending == "cancel") Assert.IsAssignableFrom<OperationCanceledException>(e);
            else Assert.IsType<QuicException>(e);
            // The call must end because of its trigger, not of a timer: the connection is idle, so the next timer that could
            // end it otherwise is its 30 s idle timeout. The bound leaves room for threads that get no CPU for a while on a
            // loaded machine (a starved driver thread was seen at 129 ms, msquic at 118 ms).
            TimeSpan bound = TimeSpan.FromSeconds(2);
            Assert.True(elapsed < bound, $"{call} ended after {elapsed.TotalMilliseconds:F1} ms ({e.GetType().Name})");
        }
        finally
        {
            if (stream is not null) await stream.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        }
    },
    configureServer: o => o.MaxInboundBidirectionalStreams = call == "open" ? 1 : 10);

    // ---- Checked against the contract: what an independent System.Net.Quic suite expects, on both providers. ----

    public static TheoryData<string, string> ProvidersAndClosers => new()
    {
        { "managed", "close" }, { "managed", "dispose" }, { "msquic", "close" }, { "msquic", "dispose" },
    };

    /// <summary>
    /// Both ends wrote 64 KiB + 1 byte with FIN and nobody read; then the client closes (or disposes) the connection.
    /// ReadsClosed faults on both ends (never stays pending): OperationAborted where the close was made,
    /// ConnectionAborted with the close code at the peer.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(ProvidersAndClosers))]
    public Task ReadsClosedFaultsWhenTheConnectionEndsWithUnreadData(string provider, string closer) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await outbound.WriteAsync(new byte[64 * 1024 + 1], completeWrites: true, ct);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        await inbound.WriteAsync(new byte[64 * 1024 + 1], completeWrites: true, ct);
        await Task.Delay(100, ct); // some of it buffered on each end
        if (closer == "close") await client.CloseAsync(7, ct);
        else await client.DisposeAsync();
        QuicException local = await Assert.ThrowsAsync<QuicException>(async () => await outbound.ReadsClosed.WaitAsync(ct));
        Assert.Equal(QuicError.OperationAborted, local.QuicError);
        QuicException remote = await Assert.ThrowsAsync<QuicException>(async () => await inbound.ReadsClosed.WaitAsync(ct));
        Assert.Equal(QuicError.ConnectionAborted, remote.QuicError);
        Assert.Equal(closer == "close" ? 7 : 0x0D, remote.ApplicationErrorCode); // the client's DefaultCloseErrorCode on dispose
    });

    /// <summary>ReadsClosed awaited with nothing to read, then the peer closes the connection: it faults with the close.</summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ReadsClosedAwaitedFaultsWhenThePeerCloses(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            Task readsClosed = inbound.ReadsClosed;
            await client.CloseAsync(5, ct);
            QuicException e = await Assert.ThrowsAsync<QuicException>(async () => await readsClosed.WaitAsync(ct));
            Assert.Equal(QuicError.ConnectionAborted, e.QuicError);
            Assert.Equal(5, e.ApplicationErrorCode);
        }
    });

    /// <summary>
    /// After ReadsClosed faulted (nothing left buffered), ReadAsync throws that failure (the same error and code), every
    /// time, on the closing side and at its peer.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ReadAsyncThrowsWhatReadsClosedFaultedWith(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using QuicStream ownedOutbound = outbound;
        await using QuicStream ownedInbound = inbound;
        await server.CloseAsync(3, ct);
        QuicException closed = await Assert.ThrowsAsync<QuicException>(async () => await outbound.ReadsClosed.WaitAsync(ct));
        Assert.Equal(QuicError.ConnectionAborted, closed.QuicError);
        for (int i = 0; i < 2; i++)
        {
            QuicException read = await Assert.ThrowsAsync<QuicException>(async () => _ = await outbound.ReadAsync(new byte[10], ct));
            Assert.Equal(closed.QuicError, read.QuicError);
            Assert.Equal(closed.ApplicationErrorCode, read.ApplicationErrorCode);
        }
        QuicException local = await Assert.ThrowsAsync<QuicException>(async () => await inbound.ReadsClosed.WaitAsync(ct));
        QuicException localRead = await Assert.ThrowsAsync<QuicException>(async () => _ = await inbound.ReadAsync(new byte[10], ct));
        Assert.Equal(QuicError.OperationAborted, local.QuicError);
        Assert.Equal(local.QuicError, localRead.QuicError);
    });

    /// <summary>
    /// A peer that has not read yet buffers a default stream's 64 KiB + 1 byte, FIN included: the writer's WritesClosed
    /// completes without any read (msquic: the default window plus System.Net.Quic's receive buffer), on a
    /// bidirectional and a unidirectional stream.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task WritesClosedCompletesWhileThePeerHasNotReadADefaultWindowWorth(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        foreach (QuicStreamType type in new[] { QuicStreamType.Bidirectional, QuicStreamType.Unidirectional })
        {
            await using QuicStream stream = await client.OpenOutboundStreamAsync(type, ct);
            await stream.WriteAsync(new byte[64 * 1024 + 1], completeWrites: true, ct);
            await stream.WritesClosed.WaitAsync(ct);
        }
        await using QuicStream first = await server.AcceptInboundStreamAsync(ct);
        Assert.Equal(64 * 1024 + 1, (await ReadToEndAsync(first, ct)).Length);
    });

    /// <summary>Writes and reads with a token already cancelled, or cancelled while pending, throw exactly OperationCanceledException.</summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task CancelledCallsThrowExactlyOperationCanceledException(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await using (outbound)
        await using (inbound)
        {
            using var cancelled = new CancellationTokenSource();
            cancelled.Cancel();
            await Assert.ThrowsAsync<OperationCanceledException>(async () => await outbound.WriteAsync(new byte[10], cancelled.Token));
            await Assert.ThrowsAsync<OperationCanceledException>(async () => _ = await inbound.ReadAsync(new byte[10], cancelled.Token));
            await Assert.ThrowsAsync<OperationCanceledException>(async () => _ = await inbound.ReadAsync(new byte[10], cancelled.Token));
        }
        var (second, secondInbound) = await OpenPairAsync(client, server, ct);
        await using (second)
        await using (secondInbound)
        {
            using var cts = new CancellationTokenSource();
            Task write = await StartBlockedWriteAsync(second, cts.Token, ct);
            cts.Cancel();
            await Assert.ThrowsAsync<OperationCanceledException>(async () => await write);
        }
        var (third, thirdInbound) = await OpenPairAsync(client, server, ct);
        await using (third)
        await using (thirdInbound)
        {
            using var readCts = new CancellationTokenSource();
            Task<int> read = thirdInbound.ReadAsync(new byte[1], readCts.Token).AsTask();
            while (!read.IsCompleted && await Task.WhenAny(read, Task.Delay(10, ct)) != read)
            {
                readCts.Cancel();
            }
            // Buffered bytes may serve the read before the cancellation: only a cancelled read is checked.
            if (!read.IsCompletedSuccessfully) await Assert.ThrowsAsync<OperationCanceledException>(async () => await read);
        }
    });

    /// <summary>CompleteWrites on a unidirectional stream the peer opened has no write side to complete: a no-op.</summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task CompleteWritesOnThePeersUnidirectionalStreamIsANoOp(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, ct);
        await outbound.WriteAsync(new byte[] { 1, 2 }, completeWrites: true, ct);
        await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
        inbound.CompleteWrites();
        inbound.CompleteWrites();
        Assert.Equal(new byte[] { 1, 2 }, await ReadToEndAsync(inbound, ct));
        await outbound.WritesClosed.WaitAsync(ct);
    });

    /// <summary>
    /// The Stream conformance rule for a disposed stream: every member but disposal itself, CanRead/CanWrite/CanSeek
    /// and the QUIC identity throws ObjectDisposedException (NotSupportedException where seeking is asked).
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task DisposedStreamMembersThrowObjectDisposedException(string provider) => WithConnectedPairAsync(provider, async (client, server, ct) =>
    {
        var (outbound, inbound) = await OpenPairAsync(client, server, ct);
        await outbound.DisposeAsync();
        inbound.Dispose();
        foreach (QuicStream stream in new[] { outbound, inbound })
        {
            await stream.DisposeAsync(); // idempotent
            stream.Dispose();
            Assert.False(stream.CanRead);
            Assert.False(stream.CanWrite);
            Assert.False(stream.CanSeek);
            Assert.Throws<ObjectDisposedException>(() => stream.ReadTimeout);
            Assert.Throws<ObjectDisposedException>(() => stream.ReadTimeout = 1);
            Assert.Throws<ObjectDisposedException>(() => stream.WriteTimeout);
            Assert.Throws<ObjectDisposedException>(() => stream.WriteTimeout = 1);
            Assert.Throws<ObjectDisposedException>(() => stream.Flush());
            Assert.Throws<ObjectDisposedException>(() => { _ = stream.FlushAsync(ct); });
            Assert.Throws<ObjectDisposedException>(() => stream.Read(new byte[1], 0, 1));
            Assert.Throws<ObjectDisposedException>(() => stream.Write(new byte[1], 0, 1));
            Assert.Throws<ObjectDisposedException>(() => stream.ReadByte());
            Assert.Throws<ObjectDisposedException>(() => stream.WriteByte(1));
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => _ = await stream.ReadAsync(new byte[1], ct));
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await stream.WriteAsync(new byte[1], ct));
            Assert.Throws<ObjectDisposedException>(() => stream.CompleteWrites());
            Assert.Throws<NotSupportedException>(() => stream.Length);
            Assert.Throws<NotSupportedException>(() => stream.Seek(0, SeekOrigin.Begin));
        }
    });

    /// <summary>
    /// StreamCapacityCallback with opens beyond the peer's limit (2): a pending open does not complete before the peer
    /// raises its limit; the raise that only lets the pending open through reports nothing (the capacity is still 0);
    /// the next raise reports both raises at once, so the increments minus the opens always equal the room left; a
    /// cancelled pending open reports nothing either.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task StreamCapacityCallbackCountsPendingAndCancelledOpensExactly(string provider)
    {
        var increments = new ConcurrentQueue<int>();
        await WithConnectedPairAsync(provider, async (client, server, ct) =>
        {
            await WaitUntilAsync(() => !increments.IsEmpty, ct);
            Assert.Equal(new[] { 2 }, increments.ToArray());
            var opened = new List<QuicStream>();
            var accepted = new List<QuicStream>();
            for (int i = 0; i < 2; i++)
            {
                QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
                await stream.WriteAsync(new byte[] { 1 }, completeWrites: true, ct);
                opened.Add(stream);
                accepted.Add(await server.AcceptInboundStreamAsync(ct));
            }
            Task<QuicStream> pending = client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct).AsTask();
            await Task.Delay(200, ct);
            Assert.False(pending.IsCompleted, "an open beyond the peer's limit completed before the peer raised it");

            // One stream ends on both sides: the peer raises its limit to 3, which the pending open takes.
            await FinishAsync(opened[0], accepted[0], ct);
            await using QuicStream third = await pending.WaitAsync(ct);
            await third.WriteAsync(new byte[] { 3 }, completeWrites: true, ct);
            QuicStream thirdAccepted = await server.AcceptInboundStreamAsync(ct);
            await Task.Delay(200, ct);
            Assert.Equal(new[] { 2 }, increments.ToArray()); // capacity 0 all along: nothing to report

            // A further open waits, and is cancelled: no report either.
            using (var cts = new CancellationTokenSource())
            {
                Task<QuicStream> cancelled = client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cts.Token).AsTask();
                await Task.Delay(100, ct);
                cts.Cancel();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cancelled);
            }
            await Task.Delay(200, ct);
            Assert.Equal(new[] { 2 }, increments.ToArray());
            await FinishAsync(opened[1], accepted[1], ct);
            await FinishAsync(third, thirdAccepted, ct);
        },
        configureServer: o => o.MaxInboundBidirectionalStreams = 2,
        configureClient: o => o.StreamCapacityCallback = (_, args) =>
        {
            if (args.BidirectionalIncrement > 0) increments.Enqueue(args.BidirectionalIncrement);
        });

        static async Task FinishAsync(QuicStream outbound, QuicStream inbound, CancellationToken ct)
        {
            await ReadToEndAsync(inbound, ct);
            await inbound.WriteAsync(new byte[] { 2 }, completeWrites: true, ct);
            await ReadToEndAsync(outbound, ct);
            await inbound.WritesClosed.WaitAsync(ct);
            await inbound.DisposeAsync();
            await outbound.DisposeAsync();
        }
    }
}
