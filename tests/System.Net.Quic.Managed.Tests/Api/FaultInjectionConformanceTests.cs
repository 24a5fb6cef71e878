using System.Diagnostics;
using System.Net.Sockets;
using Xunit.Abstractions;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Issue 18's process- and path-level faults on real loopback sockets, on both providers: a peer that vanishes in the
/// middle of a transfer, a server that restarts, and the pending calls of the listener and of ConnectAsync (those of
/// streams and connections are in StreamConformanceTests.PendingCallEndsPromptly). Each states its outcome and bound.
/// </summary>
public class FaultInjectionConformanceTests(ITestOutputHelper output)
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static readonly TimeSpan s_idleTimeout = TimeSpan.FromSeconds(2);

    /// <summary>
    /// The server streams data to the client through a relay; mid-transfer the relay starts dropping everything both
    /// ways (the peer, or the path, is gone). The client's pending ReadAsync and the server's WriteAsync end with
    /// ConnectionIdle at the idle timeout (2 s) after the last datagram got through: between 1.5 s and 4 s after the
    /// path went (RFC 9000 §10.1 stretches the timeout to 3 PTO when the round trip looks long, as on a loaded machine),
    /// never a hang.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task PeerThatVanishesMidTransferEndsAtTheIdleTimeout(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind, configure: o => o.IdleTimeout = s_idleTimeout);
        using var relay = new UdpTestRelay(listener.LocalEndPoint, loss: 0, seed: 18);
        QuicClientConnectionOptions options = ClientOptions(relay.EndPoint);
        options.IdleTimeout = s_idleTimeout;
        var (client, server) = await ConnectPairAsync(kind, listener, options);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await stream.WriteAsync(new byte[1], timeout.Token);
            await using QuicStream inbound = await server.AcceptInboundStreamAsync(timeout.Token);
            var watch = new Stopwatch();
            TimeSpan serverEnded = TimeSpan.Zero;
            Task<Exception> sender = Task.Run(async () =>
            {
                byte[] chunk = new byte[16 * 1024];
                try
                {
                    while (true) await inbound.WriteAsync(chunk, timeout.Token);
                }
                catch (Exception e)
                {
                    serverEnded = watch.Elapsed;
                    return e;
                }
            });
            byte[] buffer = new byte[64 * 1024];
            long received = 0;
            while (received < 1 << 20) received += await stream.ReadAsync(buffer, timeout.Token);
            relay.Blackhole = true;
            watch.Start();
            Exception readError = await Assert.ThrowsAnyAsync<Exception>(async () =>
            {
                while (await stream.ReadAsync(buffer, timeout.Token) >= 0)
                {
                }
            });
            TimeSpan clientEnded = watch.Elapsed;
            Exception writeError = await sender.WaitAsync(timeout.Token);
            output.WriteLine($"{provider}: client read ended {clientEnded.TotalMilliseconds:F0} ms after the path went ({readError.GetType().Name} {(readError as QuicException)?.QuicError}), "
                + $"server write {serverEnded.TotalMilliseconds:F0} ms ({writeError.GetType().Name} {(writeError as QuicException)?.QuicError})");
            Assert.Equal(QuicError.ConnectionIdle, Assert.IsType<QuicException>(readError).QuicError);
            // msquic 2.7 ends the pending write with ConnectionIdle or, in some runs, OperationAborted.
            QuicError[] expected = kind == QuicProvider.Managed ? [QuicError.ConnectionIdle] : [QuicError.ConnectionIdle, QuicError.OperationAborted];
            Assert.Contains(Assert.IsType<QuicException>(writeError).QuicError, expected);
            Assert.InRange(clientEnded, TimeSpan.FromSeconds(1.5), TimeSpan.FromSeconds(4));
            Assert.InRange(serverEnded, TimeSpan.FromSeconds(1.5), TimeSpan.FromSeconds(4));
        }
    }

    /// <summary>
    /// The server "crashes" (its connection and listener go away and its FIN and CONNECTION_CLOSE are lost) and a new
    /// server process comes up where the client's packets arrive, with no state and other keys. The client's next
    /// packets draw stateless resets it cannot authenticate (another key: RFC 9000 §10.3 lets it ignore them), so its
    /// pending read ends with ConnectionIdle (or, where a reset is recognised, a connection error) within the idle
    /// timeout plus 3 s of the restart: never a hang. The new server serves a new connection meanwhile. (The server's
    /// stream is aborted before the crash: disposing a stream with unacknowledged writes waits for their
    /// acknowledgement, on both providers, so on a dead path until the connection idles out.)
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ServerThatRestartsEndsTheClientsConnectionWithoutAHang(string provider)
    {
        QuicProvider kind = Require(provider);
        QuicListener first = await ListenAsync(kind, configure: o => o.IdleTimeout = s_idleTimeout);
        using var relay = new UdpTestRelay(first.LocalEndPoint, loss: 0, seed: 19);
        QuicClientConnectionOptions options = ClientOptions(relay.EndPoint);
        options.IdleTimeout = s_idleTimeout;
        var (client, server) = await ConnectPairAsync(kind, first, options);
        await using (client)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await stream.WriteAsync(new byte[10], timeout.Token);
            QuicStream inbound = await server.AcceptInboundStreamAsync(timeout.Token);
            Assert.Equal(10, await inbound.ReadAtLeastAsync(new byte[10], 10, cancellationToken: timeout.Token));

            // The crash: nothing the old server sends from now on reaches anyone (not the FIN its stream's disposal sends, nor its CONNECTION_CLOSE).
            relay.Blackhole = true;
            var watch = Stopwatch.StartNew();
            // Aborted, not completed: disposal then does not wait for an acknowledgement that can never come.
            inbound.Abort(QuicAbortDirection.Both, 1);
            await inbound.DisposeAsync();
            TimeSpan streamDisposed = watch.Elapsed;
            await server.DisposeAsync();
            TimeSpan connectionDisposed = watch.Elapsed;
            await first.DisposeAsync();
            TimeSpan crashed = watch.Elapsed;
            await using QuicListener restarted = await ListenAsync(kind, configure: o => o.IdleTimeout = s_idleTimeout);
            relay.Server = restarted.LocalEndPoint;
            relay.Blackhole = false;
            output.WriteLine($"{provider}: server stream disposed after {streamDisposed.TotalMilliseconds:F0} ms, connection {connectionDisposed.TotalMilliseconds:F0} ms, listener {crashed.TotalMilliseconds:F0} ms");
            Task<int> read = stream.ReadAsync(new byte[100], timeout.Token).AsTask();
            // The client keeps talking to what it thinks is its server.
            Exception? writeError = null;
            try
            {
                for (int i = 0; i < 5 && !read.IsCompleted; i++)
                {
                    await stream.WriteAsync(new byte[100], timeout.Token);
                    await Task.Delay(100, timeout.Token);
                }
            }
            catch (QuicException e)
            {
                writeError = e;
            }

            Exception readError = await Assert.ThrowsAnyAsync<Exception>(() => read);
            TimeSpan ended = watch.Elapsed - crashed;
            output.WriteLine($"{provider}: client read ended {ended.TotalMilliseconds:F0} ms after the restart: {readError.GetType().Name} {(readError as QuicException)?.QuicError} "
                + $"{readError.Message}; write error {(writeError as QuicException)?.QuicError}");
            QuicException error = Assert.IsType<QuicException>(readError);
            Assert.Contains(error.QuicError, new[] { QuicError.ConnectionIdle, QuicError.ConnectionAborted, QuicError.ConnectionRefused });
            // The idle timeout, which RFC 9000 §10.1 stretches to 3 PTO when the round trip looks long (a loaded machine),
            // and which the client's first write after the restart may start again.
            Assert.True(ended < s_idleTimeout + TimeSpan.FromSeconds(3), $"the client's read ended {ended} after the restart");

            // The restarted server works: a new client gets through the same relay.
            var (again, accepted) = await ConnectPairAsync(kind, restarted, ClientOptions(relay.EndPoint));
            await again.DisposeAsync();
            await accepted.DisposeAsync();
        }
    }

    public static TheoryData<string, string, string> ListenerAndConnectCalls()
    {
        var data = new TheoryData<string, string, string>();
        foreach (string provider in new[] { "managed", "msquic" })
        {
            data.Add(provider, "accept-connection", "cancel");
            data.Add(provider, "accept-connection", "listener-dispose");
            data.Add(provider, "connect", "cancel");
        }

        return data;
    }

    /// <summary>
    /// A pending AcceptConnectionAsync ends within 100 ms of its token being cancelled or of the listener's disposal;
    /// a ConnectAsync whose server never answers ends within 100 ms of its token being cancelled. (msquic, the
    /// reference, is held to 500 ms for accept; its connect ends only when its own handshake attempt gives up, about
    /// 3 s in, so only an upper bound of 5 s applies to it.)
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(ListenerAndConnectCalls))]
    public async Task PendingListenerAndConnectCallsEndPromptly(string provider, string call, string ending)
    {
        QuicProvider kind = Require(provider);
        using var cts = new CancellationTokenSource();
        using var silent = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        silent.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        QuicListener listener = await ListenAsync(kind);
        try
        {
            Task pending = call == "connect"
                ? ConnectAsync(kind, ClientOptions((IPEndPoint)silent.LocalEndPoint!), cts.Token)
                : listener.AcceptConnectionAsync(cts.Token).AsTask();
            await Task.Delay(200);
            Assert.False(pending.IsCompleted, $"{call} did not wait");
            var watch = Stopwatch.StartNew();
            if (ending == "cancel") await cts.CancelAsync();
            else await listener.DisposeAsync();
            Exception e = await Assert.ThrowsAnyAsync<Exception>(() => pending.WaitAsync(TimeSpan.FromSeconds(10)));
            TimeSpan elapsed = watch.Elapsed;
            output.WriteLine($"{provider} {call} {ending}: ended after {elapsed.TotalMilliseconds:F1} ms with {e.GetType().Name}");
            if (ending == "cancel") Assert.IsAssignableFrom<OperationCanceledException>(e);
            else Assert.True(e is ObjectDisposedException or QuicException { QuicError: QuicError.OperationAborted }, e.ToString());
            TimeSpan bound = kind == QuicProvider.Managed ? TimeSpan.FromMilliseconds(100) : call == "connect" ? TimeSpan.FromSeconds(5) : TimeSpan.FromMilliseconds(500);
            Assert.True(elapsed < bound, $"{call} ended {elapsed.TotalMilliseconds:F1} ms after {ending}");
        }
        finally
        {
            await listener.DisposeAsync();
        }
    }
}
