using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Tests.Api;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

/// <summary>
/// End to end: a real loopback connection through the public API, observed by an in-process EventListener
/// (and a MeterListener): every informational event, the datagram events, Secret only with the key log opt-in, and
/// the counters moving with real traffic.
/// </summary>
[Collection(nameof(TelemetryCollection))]
public class ConnectionEventsTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private static readonly EventKeywords s_allKeywords = QuicEventSource.Keywords.Datagrams | QuicEventSource.Keywords.Secrets;

    [Fact]
    public async Task ConnectionHandshakeStreamAndCloseEventsCarryTheirPayload()
    {
        using var listener = new RecordingEventListener(EventLevel.Verbose, s_allKeywords);
        await using QuicListener quicListener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback);
        string listenAt = quicListener.LocalEndPoint.ToString();
        (QuicConnection client, QuicConnection server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, quicListener);
        string clientAt = client.LocalEndPoint.ToString();

        // ConnectionStarted: role and both addresses; its ID names the connection in every later event.
        EventWrittenEventArgs clientStarted = Assert.Single(listener.Named("ConnectionStarted"), e => (bool)e.Payload![1]! == false && (string)e.Payload[3]! == listenAt);
        EventWrittenEventArgs serverStarted = Assert.Single(listener.Named("ConnectionStarted"), e => (bool)e.Payload![1]! && (string)e.Payload[2]! == listenAt);
        string clientId = (string)clientStarted.Payload![0]!;
        string serverId = (string)serverStarted.Payload![0]!;
        Assert.Equal(clientAt, (string)clientStarted.Payload[2]!);
        Assert.Equal(clientAt, (string)serverStarted.Payload![3]!);
        Assert.Matches("^[0-9a-f]{16}$", clientId); // 8-byte connection ID in hex
        Assert.NotEqual(clientId, serverId);

        // HandshakeCompleted: negotiated version, ALPN and cipher suite (the client and server agree).
        Assert.True(await listener.WaitUntilAsync(() => listener.Named("HandshakeCompleted").Any(e => (string)e.Payload![0]! == serverId), s_wait));
        foreach (string id in new[] { clientId, serverId })
        {
            EventWrittenEventArgs done = Assert.Single(listener.Named("HandshakeCompleted"), e => (string)e.Payload![0]! == id);
            Assert.Equal(1L, done.Payload![1]); // QUIC v1
            Assert.Equal("test", done.Payload[2]);
            Assert.Equal(server.NegotiatedCipherSuite.ToString(), done.Payload[3]);
            Assert.InRange((double)done.Payload[4]!, 0.0, 10_000.0);
        }

        // One request/response stream: opened on both sides (locally on the client), closed on both once finished.
        await using (QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional))
        {
            await stream.WriteAsync(new byte[] { 1, 2, 3 }, completeWrites: true);
            await using QuicStream accepted = await server.AcceptInboundStreamAsync();
            Assert.Equal(new byte[] { 1, 2, 3 }, await QuicApiTestEnvironment.ReadToEndAsync(accepted));
            await accepted.WriteAsync(new byte[] { 4 }, completeWrites: true);
            Assert.Equal(new byte[] { 4 }, await QuicApiTestEnvironment.ReadToEndAsync(stream));
        }
        Assert.True(await listener.WaitUntilAsync(() => listener.Named("StreamClosed").Length >= 2, s_wait), "StreamClosed on both sides");
        EventWrittenEventArgs clientOpened = Assert.Single(listener.Named("StreamOpened"), e => (string)e.Payload![0]! == clientId);
        EventWrittenEventArgs serverOpened = Assert.Single(listener.Named("StreamOpened"), e => (string)e.Payload![0]! == serverId);
        Assert.Equal((0L, true), ((long)clientOpened.Payload![1]!, (bool)clientOpened.Payload[2]!));
        Assert.Equal((0L, false), ((long)serverOpened.Payload![1]!, (bool)serverOpened.Payload[2]!));
        Assert.Equal(0L, Assert.Single(listener.Named("StreamClosed"), e => (string)e.Payload![0]! == clientId).Payload![1]);
        Assert.Equal(0L, Assert.Single(listener.Named("StreamClosed"), e => (string)e.Payload![0]! == serverId).Payload![1]);

        // ConnectionClosed: the application's code and reason, by us on the client, by the peer on the server.
        await client.CloseAsync(0x2a);
        Assert.True(await listener.WaitUntilAsync(() => listener.Named("ConnectionClosed").Any(e => (string)e.Payload![0]! == serverId), s_wait));
        EventWrittenEventArgs clientClosed = Assert.Single(listener.Named("ConnectionClosed"), e => (string)e.Payload![0]! == clientId);
        EventWrittenEventArgs serverClosed = Assert.Single(listener.Named("ConnectionClosed"), e => (string)e.Payload![0]! == serverId);
        Assert.Equal((0x2aL, true, false), ((long)clientClosed.Payload![1]!, (bool)clientClosed.Payload[2]!, (bool)clientClosed.Payload[3]!));
        Assert.Equal((0x2aL, true, true), ((long)serverClosed.Payload![1]!, (bool)serverClosed.Payload[2]!, (bool)serverClosed.Payload[3]!));
        await client.DisposeAsync();
        await server.DisposeAsync();

        // Datagram events: raw bytes, direction, both endpoints, time and the same connection ID.
        EventWrittenEventArgs[] sent = listener.Named("DatagramSent").Where(e => (string)e.Payload![0]! == clientId).ToArray();
        Assert.NotEmpty(sent);
        Assert.All(sent, e =>
        {
            Assert.Equal(clientAt, e.Payload![1]);
            Assert.Equal(listenAt, e.Payload[2]);
            Assert.True((long)e.Payload[3]! > 0);
            Assert.NotEmpty((byte[])e.Payload[4]!);
        });
        byte[] first = (byte[])sent[0].Payload![4]!;
        Assert.Equal(0xc0, first[0] & 0xf0 & 0xc0); // the first datagram is a long-header Initial
        Assert.True(first.Length >= 1200); // RFC 9000 §14.1: padded Initial
        Assert.Contains(listener.Named("DatagramReceived"), e => (string)e.Payload![0]! == serverId && (string)e.Payload[1]! == listenAt);

        // Nobody opted in to key logging: a listener that asked for secrets still gets none.
        Assert.Empty(listener.Named("Secret"));
        Assert.Empty(listener.Named("HandshakeFailed"));
    }

    [Fact]
    public async Task SecretEventsOnlyAfterKeyLogOptInAndMatchTheKeyLogFile()
    {
        string keyLog = Path.Combine(Path.GetTempPath(), "quic-secret-events-" + Guid.NewGuid().ToString("N") + ".log");
        using var listener = new RecordingEventListener(EventLevel.Verbose, QuicEventSource.Keywords.Secrets);
        try
        {
            QuicManagedDiagnostics.KeyLogFilePath = keyLog;
            await using (QuicListener quicListener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback))
            {
                (QuicConnection client, QuicConnection server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, quicListener);
                Assert.True(await listener.WaitUntilAsync(() => listener.Named("Secret").Length >= 8, s_wait), "4 secrets on each side");
                await client.CloseAsync(0);
                await client.DisposeAsync();
                await server.DisposeAsync();
            }

            EventWrittenEventArgs[] secrets = listener.Named("Secret");
            string[] connectionIds = listener.Named("ConnectionStarted").Select(e => (string)e.Payload![0]!).ToArray();
            Assert.Equal(2, connectionIds.Length);
            HashSet<string> fileLines = File.ReadAllLines(keyLog).ToHashSet(StringComparer.Ordinal);
            foreach (string id in connectionIds)
            {
                EventWrittenEventArgs[] mine = secrets.Where(e => (string)e.Payload![0]! == id).ToArray();
                Assert.Equal(
                    new[] { "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0" },
                    mine.Select(e => (string)e.Payload![1]!).Order(StringComparer.Ordinal));
                foreach (EventWrittenEventArgs e in mine)
                {
                    byte[] clientRandom = (byte[])e.Payload![2]!;
                    byte[] secret = (byte[])e.Payload[3]!;
                    Assert.Equal(32, clientRandom.Length);
                    // The event is the key log line in structured form: the same label, client random and secret.
                    Assert.Contains($"{e.Payload[1]} {Convert.ToHexStringLower(clientRandom)} {Convert.ToHexStringLower(secret)}", fileLines);
                }
            }
        }
        finally
        {
            QuicManagedDiagnostics.KeyLogFilePath = null;
            File.Delete(keyLog);
        }
    }

    [Fact]
    public async Task FailedHandshakeRaisesHandshakeFailedAndCountsIt()
    {
        // Warning level: HandshakeFailed is a warning and must reach a listener that wants nothing less severe.
        using var listener = new RecordingEventListener(EventLevel.Warning, QuicEventSource.Keywords.Datagrams);
        long failuresBefore = QuicTelemetryCounters.HandshakeFailures;
        long completedBefore = QuicTelemetryCounters.HandshakesCompleted;
        await using QuicListener quicListener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback);
        // The server speaks "test" only: RFC 9001 §8.1 says a server with no common ALPN fails the handshake with
        // the no_application_protocol alert, i.e. CRYPTO_ERROR 0x100 + 120 (RFC 9001 §4.8).
        QuicClientConnectionOptions options = QuicApiTestEnvironment.ClientOptions(quicListener.LocalEndPoint, alpn: "other");
        using var timeout = new CancellationTokenSource(s_wait);
        await Assert.ThrowsAnyAsync<Exception>(() => QuicApiTestEnvironment.ConnectAsync(QuicProvider.Managed, options, timeout.Token));

        Assert.True(await listener.WaitUntilAsync(() => listener.Named("HandshakeFailed").Length >= 2, s_wait), "both sides report the failure");
        EventWrittenEventArgs[] failed = listener.Named("HandshakeFailed");
        Assert.All(failed, e => Assert.Equal(0x100L + 120, e.Payload![1]));
        Assert.Contains(failed, e => ((string)e.Payload![2]!).Length > 0);
        Assert.Empty(listener.Named("HandshakeCompleted")); // informational: not sent to a Warning listener
        Assert.Equal(completedBefore, QuicTelemetryCounters.HandshakesCompleted);
        Assert.True(QuicTelemetryCounters.HandshakeFailures >= failuresBefore + 2);
    }

    [Fact]
    public async Task CountersAndInstrumentsMoveWithRealTraffic()
    {
        using var listener = new RecordingEventListener(EventLevel.Informational, QuicEventSource.Keywords.Datagrams, counters: true);
        var measured = new Dictionary<string, double>();
        using var meterListener = new MeterListener();
        meterListener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == QuicMetrics.MeterName) l.EnableMeasurementEvents(instrument);
        };
        meterListener.SetMeasurementEventCallback<long>((i, v, _, _) => measured[i.Name] = v);
        meterListener.SetMeasurementEventCallback<double>((i, v, _, _) => measured[i.Name] = v);
        meterListener.Start();
        meterListener.RecordObservableInstruments();
        var before = new Dictionary<string, double>(measured);

        await using QuicListener quicListener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback);
        (QuicConnection client, QuicConnection server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, quicListener);
        byte[] payload = new byte[256 * 1024];
        await using (QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Unidirectional))
        {
            await stream.WriteAsync(payload, completeWrites: true);
            await using QuicStream accepted = await server.AcceptInboundStreamAsync();
            Assert.Equal(payload.Length, (await QuicApiTestEnvironment.ReadToEndAsync(accepted)).Length);
        }

        // While both connections are open: active >= 2, an RTT and a congestion window are published.
        Assert.True(await listener.WaitUntilAsync(() => listener.MaxCounter("active-connections") >= 2 && listener.MaxCounter("smoothed-rtt") > 0
            && listener.MaxCounter("congestion-window") > 0 && listener.MaxCounter("bytes-received-per-second") > 0, s_wait),
            "EventCounters published the open connections and their traffic");
        meterListener.RecordObservableInstruments();
        Assert.True(measured["quic.connection.active"] >= 2);
        Assert.True(measured["quic.handshake.completed"] >= before["quic.handshake.completed"] + 2);
        Assert.True(measured["quic.bytes.sent"] >= before["quic.bytes.sent"] + payload.Length);
        Assert.True(measured["quic.bytes.received"] >= before["quic.bytes.received"] + payload.Length);
        Assert.True(measured["quic.datagrams.sent"] >= before["quic.datagrams.sent"] + payload.Length / QuicConnectionOptions.LoopbackMaxPathDatagramSize);
        // The gauge is the mean over every connection of the process, including other tests' running in parallel (under
        // load some of them see RTTs above a second on loopback): it must be published and positive, and only a wild
        // value (a unit mix-up: microseconds reported as seconds) fails the upper bound.
        Assert.InRange(measured["quic.rtt.smoothed"], 1e-7, 60.0);
        Assert.True(measured["quic.congestion_window"] >= 2 * 1200);

        await client.CloseAsync(0);
        await client.DisposeAsync();
        await server.DisposeAsync();
        Assert.True(QuicTelemetryCounters.HandshakesCompleted >= before["quic.handshake.completed"] + 2);
        Assert.True(listener.MaxCounter("handshakes-per-second") >= 1 || listener.MaxCounter("handshakes-completed") >= 2);
    }
}
