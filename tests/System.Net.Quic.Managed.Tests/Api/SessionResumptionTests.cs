using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Session resumption and 0-RTT through the public API extension (QuicSessionTicketStore, EnableEarlyData) on loopback,
/// managed provider (System.Net.Quic has no equivalent).
/// </summary>
public class SessionResumptionTests
{
    private static CancellationToken Timeout() => new CancellationTokenSource(TimeSpan.FromSeconds(30)).Token;

    /// <summary>Server side of every test: answers each stream with "echo:" + the request.</summary>
    private static async Task ServeAsync(QuicListener listener, List<QuicConnection> accepted, CancellationToken ct)
    {
        try
        {
            while (!ct.IsCancellationRequested)
            {
                QuicConnection connection = await listener.AcceptConnectionAsync(ct);
                lock (accepted) accepted.Add(connection);
                _ = Task.Run(async () =>
                {
                    try
                    {
                        while (true)
                        {
                            QuicStream stream = await connection.AcceptInboundStreamAsync(ct);
                            byte[] request = await ReadToEndAsync(stream, ct);
                            await stream.WriteAsync("echo:"u8.ToArray().Concat(request).ToArray(), completeWrites: true, ct);
                            await stream.WritesClosed.WaitAsync(ct);
                            await stream.DisposeAsync();
                        }
                    }
                    catch (Exception e) when (e is QuicException or OperationCanceledException or ObjectDisposedException)
                    {
                    }
                }, ct);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
        {
        }
    }

    private static async Task<byte[]> RequestAsync(QuicConnection connection, byte[] request, CancellationToken ct)
    {
        await using QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await stream.WriteAsync(request, completeWrites: true, ct);
        return await ReadToEndAsync(stream, ct);
    }

    private static async Task WaitForTicketAsync(QuicSessionTicketStore store, CancellationToken ct)
    {
        // The ticket travels after the handshake (NewSessionTicket in 1-RTT CRYPTO): poll briefly.
        while (store.Count == 0) await Task.Delay(10, ct);
    }

    private static Task<(QuicListener Listener, List<QuicConnection> Accepted, CancellationTokenSource Stop)> StartServerAsync(bool acceptEarlyData)
        => StartServerAsync(() => acceptEarlyData);

    private static async Task<(QuicListener Listener, List<QuicConnection> Accepted, CancellationTokenSource Stop)> StartServerAsync(Func<bool> acceptEarlyData)
    {
        QuicListener listener = await QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback, configure: o => o.EnableEarlyData = acceptEarlyData()));
        var accepted = new List<QuicConnection>();
        var stop = new CancellationTokenSource();
        _ = ServeAsync(listener, accepted, stop.Token);
        return (listener, accepted, stop);
    }

    [Fact]
    public async Task SecondConnectionResumesAndReportsTheOriginalCertificate()
    {
        var (listener, accepted, stop) = await StartServerAsync(acceptEarlyData: false);
        await using (listener)
        using (stop)
        {
            CancellationToken ct = Timeout();
            var store = new QuicSessionTicketStore();
            QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
            options.SessionTicketStore = store;

            await using (QuicConnection first = await QuicConnection.ConnectAsync(options, ct))
            {
                Assert.False(first.IsResumed);
                Assert.Equal("echo:a"u8.ToArray(), await RequestAsync(first, "a"u8.ToArray(), ct));
                await WaitForTicketAsync(store, ct);
            }

            await using QuicConnection second = await QuicConnection.ConnectAsync(ClientOptionsWith(listener, store, earlyData: false), ct);
            Assert.True(second.IsResumed);
            Assert.False(second.IsEarlyDataAccepted);
            Assert.Equal(ServerCertificate.Thumbprint, ((X509Certificate2)second.RemoteCertificate!).Thumbprint);
            Assert.Equal("test", second.NegotiatedApplicationProtocol.ToString());
            Assert.Equal("echo:b"u8.ToArray(), await RequestAsync(second, "b"u8.ToArray(), ct));
            lock (accepted) Assert.True(accepted[^1].IsResumed);
            stop.Cancel();
        }
    }

    private static QuicClientConnectionOptions ClientOptionsWith(QuicListener listener, QuicSessionTicketStore store, bool earlyData)
        => ClientOptionsWith(listener.LocalEndPoint, store, earlyData);

    private static QuicClientConnectionOptions ClientOptionsWith(IPEndPoint server, QuicSessionTicketStore store, bool earlyData)
    {
        QuicClientConnectionOptions options = ClientOptions(server);
        options.SessionTicketStore = store;
        options.EnableEarlyData = earlyData;
        return options;
    }

    [Fact]
    public async Task ZeroRttRequestIsAcceptedAndAnswered()
    {
        var (listener, accepted, stop) = await StartServerAsync(acceptEarlyData: true);
        await using (listener)
        using (stop)
        // 50 ms each way: the request is written long before the server's reply could complete the handshake.
        using (var relay = new UdpTestRelay(listener.LocalEndPoint, loss: 0, seed: 1, delay: TimeSpan.FromMilliseconds(50)))
        {
            CancellationToken ct = Timeout();
            var store = new QuicSessionTicketStore();
            QuicClientConnectionOptions Options() => ClientOptionsWith(relay.EndPoint, store, earlyData: true);
            await using (QuicConnection first = await QuicConnection.ConnectAsync(Options(), ct))
            {
                Assert.False(first.IsResumed);
                Assert.Equal("echo:1"u8.ToArray(), await RequestAsync(first, "1"u8.ToArray(), ct));
                await WaitForTicketAsync(store, ct);
            }

            await using QuicConnection second = await QuicConnection.ConnectAsync(Options(), ct);
            // ConnectAsync returned with 0-RTT keys, before any round trip: the request leaves in 0-RTT packets.
            byte[] request = RandomNumberGenerator.GetBytes(4000);
            byte[] response = await RequestAsync(second, request, ct);
            Assert.Equal("echo:"u8.ToArray().Concat(request).ToArray(), response);
            await second.WaitForHandshakeAsync(ct);
            Assert.True(second.IsResumed);
            Assert.True(second.IsEarlyDataAccepted);
            Assert.True(((ManagedConnection)second.Impl).Core!.Statistics.ZeroRttPacketsSent > 0, "the request should have gone out in 0-RTT packets");
            QuicConnection serverSide;
            lock (accepted) serverSide = accepted[^1];
            Assert.True(serverSide.IsResumed);
            Assert.True(serverSide.IsEarlyDataAccepted);
            stop.Cancel();
        }
    }

    /// <summary>
    /// RFC 9001 §9.2, RFC 8446 §8: an attacker records a client's first flight (Initial with the ClientHello and the
    /// 0-RTT packets carrying a request) and sends it again from another address, while the original connection is open
    /// and after it closed. The replayed ClientHello can start a server connection, but its handshake cannot complete
    /// (the recorded Finished was made with the original key exchange), and the server hands a connection and its
    /// streams to the application only once its handshake completed: the request is served exactly once.
    /// </summary>
    [Fact]
    public async Task ReplayedZeroRttFirstFlightNeverReachesTheApplication()
    {
        QuicListener listener = await QuicListener.ListenAsync(ListenerOptions(IPAddress.Loopback, configure: o => o.EnableEarlyData = true));
        int requestsSeen = 0, connectionsAccepted = 0;
        using var stop = new CancellationTokenSource();
        async Task ServeAsync()
        {
            try
            {
                while (true)
                {
                    QuicConnection connection = await listener.AcceptConnectionAsync(stop.Token);
                    Interlocked.Increment(ref connectionsAccepted);
                    _ = Task.Run(async () =>
                    {
                        try
                        {
                            while (true)
                            {
                                await using QuicStream stream = await connection.AcceptInboundStreamAsync(stop.Token);
                                byte[] request = await ReadToEndAsync(stream, stop.Token);
                                if (request.AsSpan().SequenceEqual("transfer 100 to mallory"u8)) Interlocked.Increment(ref requestsSeen);
                                await stream.WriteAsync("done"u8.ToArray(), completeWrites: true, stop.Token);
                                await stream.WritesClosed.WaitAsync(stop.Token);
                            }
                        }
                        catch (Exception e) when (e is QuicException or OperationCanceledException or ObjectDisposedException)
                        {
                        }
                    });
                }
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
            }
        }

        await using (listener)
        using (var relay = new UdpTestRelay(listener.LocalEndPoint, loss: 0, seed: 3, delay: TimeSpan.FromMilliseconds(20)))
        using (var attacker = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Dgram, System.Net.Sockets.ProtocolType.Udp))
        {
            Task serving = ServeAsync();
            CancellationToken ct = Timeout();
            var store = new QuicSessionTicketStore();
            await using (QuicConnection first = await QuicConnection.ConnectAsync(ClientOptionsWith(relay.EndPoint, store, earlyData: true), ct))
            {
                Assert.Equal("done"u8.ToArray(), await RequestAsync(first, "hello"u8.ToArray(), ct));
                await WaitForTicketAsync(store, ct);
            }

            var recorded = new System.Collections.Concurrent.ConcurrentQueue<byte[]>();
            relay.RecordToServer = recorded;
            QuicConnection second = await QuicConnection.ConnectAsync(ClientOptionsWith(relay.EndPoint, store, earlyData: true), ct);
            Assert.Equal("done"u8.ToArray(), await RequestAsync(second, "transfer 100 to mallory"u8.ToArray(), ct));
            Assert.True(second.IsEarlyDataAccepted);
            relay.RecordToServer = null;
            Assert.NotEmpty(recorded);
            Assert.Equal(1, Volatile.Read(ref requestsSeen));
            int acceptedBefore = Volatile.Read(ref connectionsAccepted);

            attacker.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            async Task ReplayAsync()
            {
                foreach (byte[] datagram in recorded) await attacker.SendToAsync(datagram, listener.LocalEndPoint, ct);
                await Task.Delay(500, ct);
            }

            await ReplayAsync(); // the original connection is still open
            await second.DisposeAsync();
            await Task.Delay(200, ct);
            await ReplayAsync(); // and after it closed
            await ReplayAsync();

            Assert.Equal(1, Volatile.Read(ref requestsSeen));
            Assert.Equal(acceptedBefore, Volatile.Read(ref connectionsAccepted));
            stop.Cancel();
            await serving;
        }
    }

    [Fact]
    public async Task ZeroRttRefusedByTheServerIsResentTransparently()
    {
        bool acceptEarlyData = true; // the first connection's ticket allows 0-RTT; the second connection's server refuses it
        var (listener, accepted, stop) = await StartServerAsync(() => acceptEarlyData);
        await using (listener)
        using (stop)
        using (var relay = new UdpTestRelay(listener.LocalEndPoint, loss: 0, seed: 2, delay: TimeSpan.FromMilliseconds(50)))
        {
            CancellationToken ct = Timeout();
            var store = new QuicSessionTicketStore();
            QuicClientConnectionOptions Options() => ClientOptionsWith(relay.EndPoint, store, earlyData: true);
            await using (QuicConnection first = await QuicConnection.ConnectAsync(Options(), ct))
            {
                await RequestAsync(first, "x"u8.ToArray(), ct);
                await WaitForTicketAsync(store, ct);
            }
            acceptEarlyData = false;

            await using QuicConnection second = await QuicConnection.ConnectAsync(Options(), ct);
            byte[] request = RandomNumberGenerator.GetBytes(3000);
            byte[] response = await RequestAsync(second, request, ct);
            Assert.Equal("echo:"u8.ToArray().Concat(request).ToArray(), response);
            await second.WaitForHandshakeAsync(ct);
            Assert.True(second.IsResumed); // resumption itself succeeded
            Assert.False(second.IsEarlyDataAccepted);
            var statistics = ((ManagedConnection)second.Impl).Core!.Statistics;
            Assert.True(statistics.ZeroRttPacketsSent > 0);
            Assert.True(statistics.ZeroRttRejected);
            lock (accepted) Assert.False(accepted[^1].IsEarlyDataAccepted);
            stop.Cancel();
        }
    }

    [Fact]
    public void EarlyDataWithoutAStoreIsRejectedUpFront()
    {
        QuicClientConnectionOptions options = ClientOptions(new IPEndPoint(IPAddress.Loopback, 1));
        options.EnableEarlyData = true;
        ArgumentException e = Assert.Throws<ArgumentException>(() => QuicConnection.ConnectAsync(options).AsTask().GetAwaiter().GetResult());
        Assert.Contains("SessionTicketStore", e.Message);
    }

    [Fact]
    public void StoreKeepsTheNewestTicketsPerServerAndHandsEachOutOnce()
    {
        var store = new QuicSessionTicketStore(ticketsPerServer: 2);
        static TlsSessionTicket Ticket(byte id, uint lifetime = 100) => new([id], new byte[32], System.Net.Security.TlsCipherSuite.TLS_AES_128_GCM_SHA256,
            lifetime, 0, receivedUs: 1_000_000, allowsEarlyData: false, "h", default, null);
        store.Add("a", Ticket(1), null);
        store.Add("a", Ticket(2), null);
        store.Add("a", Ticket(3), null); // evicts 1
        store.Add("b", Ticket(9, lifetime: 1), null);
        Assert.Equal(3, store.Count);
        Assert.True(store.TryTake("a", 2_000_000, out var e1));
        Assert.Equal(3, e1.Ticket.Ticket[0]); // newest first
        Assert.True(store.TryTake("a", 2_000_000, out var e2));
        Assert.Equal(2, e2.Ticket.Ticket[0]);
        Assert.False(store.TryTake("a", 2_000_000, out _));
        Assert.False(store.TryTake("b", 5_000_000, out _)); // expired after its 1 s lifetime
        Assert.Equal(0, store.Count);
        Assert.Throws<ArgumentOutOfRangeException>(() => new QuicSessionTicketStore(0));
    }
}
