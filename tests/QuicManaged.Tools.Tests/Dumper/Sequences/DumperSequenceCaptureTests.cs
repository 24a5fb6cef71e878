using System.Diagnostics;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

[CollectionDefinition(nameof(DumperCaptureCollection), DisableParallelization = true)]
public sealed class DumperCaptureCollection
{
}

/// <summary>
/// DatagramDumper on whole captures, one per sequence a QUIC stack produces: each test makes real traffic on loopback
/// (through a <see cref="CaptureRelay"/>, or our stack's own datagram trace where the client reaches the server's preferred
/// address directly), writes it as a pcap, decodes it with the key log the stacks wrote, and requires every packet
/// decrypted, every frame parsed, and each connection's handshake and close. Against Cloudflare's quiche
/// (<see cref="QuichePeer"/>) where quiche can produce the sequence, ngtcp2's gtlsclient for the HelloRetryRequest, our
/// client against our server otherwise. A peer that is not installed skips its tests, saying why.
/// </summary>
[Collection(nameof(DumperCaptureCollection))]
public sealed class DumperSequenceCaptureTests : IDisposable
{
    private const string Hq = "hq-interop";
    private readonly string _dir = Directory.CreateTempSubdirectory("dumper-sequence-").FullName;
    private readonly string _ourKeys;
    private readonly string _peerKeys;
    private readonly string? _previousKeyLog = QuicManagedDiagnostics.KeyLogFilePath;
    private readonly CaptureFile _capture = new();

    public DumperSequenceCaptureTests()
    {
        _ourKeys = Path.Combine(_dir, "our.keys");
        _peerKeys = Path.Combine(_dir, "peer.keys");
        File.WriteAllText(_ourKeys, "");
        File.WriteAllText(_peerKeys, "");
        QuicManagedDiagnostics.KeyLogFilePath = _ourKeys;
    }

    public void Dispose()
    {
        QuicManagedDiagnostics.KeyLogFilePath = _previousKeyLog;
        try
        {
            Directory.Delete(_dir, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static CancellationToken Timeout(int seconds = 30) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    private static int FreeUdpPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    private static byte[] Payload(int size) => RandomNumberGenerator.GetBytes(size);

    private static void AssertSame(byte[] expected, byte[] actual) =>
        Assert.True(expected.AsSpan().SequenceEqual(actual), $"download differs: {actual.Length} bytes, {expected.Length} expected");

    // --- our endpoints ---------------------------------------------------------------------------------------------------

    /// <summary>Our client for a quiche server: hq-interop, its self-signed certificate accepted.</summary>
    private static QuicClientConnectionOptions ClientForQuiche(IPEndPoint remote)
    {
        QuicClientConnectionOptions options = ClientOptions(remote, Hq, trustTestRoot: false);
        options.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        return options;
    }

    /// <summary>hq-interop request from our client: "GET /name", the response is the stream's data up to its FIN.</summary>
    private static async Task<byte[]> HqGetAsync(QuicConnection connection, string name, CancellationToken ct)
    {
        await using QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await stream.WriteAsync(Encoding.ASCII.GetBytes($"GET /{name}\r\n"), completeWrites: true, ct);
        return await ReadToEndAsync(stream, ct);
    }

    /// <summary>Our server's side of hq-interop (and of the echo the own-stack sequences use): every accepted
    /// connection's streams answered until the listener is disposed. "GET /name" gets the file, anything else an echo.</summary>
    private static Task ServeAsync(QuicListener listener, IReadOnlyDictionary<string, byte[]> files, CancellationToken ct) => Task.Run(async () =>
    {
        var connections = new List<Task>();
        try
        {
            while (true)
            {
                QuicConnection connection = await listener.AcceptConnectionAsync(ct);
                connections.Add(Task.Run(async () =>
                {
                    await using (connection)
                    {
                        try
                        {
                            while (true)
                            {
                                QuicStream stream = await connection.AcceptInboundStreamAsync(ct);
                                _ = Task.Run(async () =>
                                {
                                    await using (stream)
                                    {
                                        byte[] request = await ReadToEndAsync(stream, ct);
                                        string text = Encoding.ASCII.GetString(request);
                                        byte[] response = text.StartsWith("GET /", StringComparison.Ordinal) && files.TryGetValue(text[5..].Trim(), out byte[]? file) ? file : request;
                                        await stream.WriteAsync(response, completeWrites: true, ct);
                                        await stream.WritesClosed;
                                    }
                                }, ct);
                            }
                        }
                        catch (Exception e) when (e is QuicException or OperationCanceledException or ObjectDisposedException)
                        {
                            // The client closed the connection, or the test ended.
                        }
                    }
                }, ct));
            }
        }
        catch (Exception e) when (e is QuicException or OperationCanceledException or ObjectDisposedException)
        {
        }

        await Task.WhenAll(connections);
    }, ct);

    private static async Task<byte[]> EchoAsync(QuicConnection connection, int size, CancellationToken ct)
    {
        byte[] data = Payload(size);
        await using QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        Task<byte[]> response = ReadToEndAsync(stream, ct);
        await stream.WriteAsync(data, completeWrites: true, ct);
        byte[] echoed = await response;
        Assert.True(data.AsSpan().SequenceEqual(echoed), "the echo is not byte-exact");
        return echoed;
    }

    /// <summary>Closes our client (CONNECTION_CLOSE on the wire) and lets the relay record it.</summary>
    private static async Task CloseAsync(QuicConnection client)
    {
        await client.CloseAsync(0, Timeout(10));
        await client.DisposeAsync();
        await Task.Delay(150);
    }

    private DecodedCapture Decode(string name, string keyLog) => DecodedCapture.Decode(name, _capture, keyLog);

    private async Task<(QuicListener Listener, Task Serving, CancellationTokenSource Stop)> StartOurServerAsync(
        Action<QuicListenerOptions>? configure = null, Action<QuicServerConnectionOptions>? configureConnection = null,
        IReadOnlyDictionary<string, byte[]>? files = null, string alpn = "test")
    {
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback, alpn, configureConnection);
        configure?.Invoke(options);
        QuicListener listener = await QuicListener.ListenAsync(options, QuicProvider.Managed, CancellationToken.None);
        var stop = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        return (listener, ServeAsync(listener, files ?? new Dictionary<string, byte[]>(), stop.Token), stop);
    }

    private static async Task StopAsync((QuicListener Listener, Task Serving, CancellationTokenSource Stop) server)
    {
        await server.Listener.DisposeAsync();
        server.Stop.Cancel();
        await server.Serving.WaitAsync(TimeSpan.FromSeconds(10));
        server.Stop.Dispose();
    }

    /// <summary>A quiche hq-interop server serving <paramref name="files"/>, behind a recording relay.</summary>
    private async Task<(QuichePeer Server, CaptureRelay Relay)> StartQuicheServerAsync(string testCase, Dictionary<string, byte[]> files)
    {
        QuichePeer.SkipIfUnavailable();
        string dir = QuichePeer.CreateServerDirectory(files);
        int port = FreeUdpPort();
        QuichePeer server = await QuichePeer.StartServerAsync(testCase, port, dir, _peerKeys);
        return (server, new CaptureRelay(new IPEndPoint(IPAddress.Loopback, port), _capture));
    }

    /// <summary>quiche's hq-interop client downloads every file from our server through a recording relay.</summary>
    private async Task QuicheClientDownloadsAsync(string testCase, Dictionary<string, byte[]> files, Action<QuicListenerOptions>? configure = null)
    {
        QuichePeer.SkipIfUnavailable();
        var server = await StartOurServerAsync(configure, files: files, alpn: Hq);
        using (var relay = new CaptureRelay(server.Listener.LocalEndPoint, _capture))
        {
            string downloads = Directory.CreateDirectory(Path.Combine(_dir, "dl")).FullName;
            (int exit, string log) = await QuichePeer.RunClientAsync(testCase, relay.EndPoint, downloads, _peerKeys, files.Keys.ToArray());
            Assert.True(exit == 0, $"quiche client exit {exit}: {log}");
            foreach ((string name, byte[] data) in files) AssertSame(data, File.ReadAllBytes(Path.Combine(downloads, name)));
            await Task.Delay(150);
        }

        await StopAsync(server);
    }

    /// <summary>One connection with a Retry whose tag was checked, and the ClientHellos before and after it.</summary>
    private static void AssertRetryDecoded(DecodedCapture d)
    {
        d.AssertComplete(connections: 1);
        d.Check(d.Count("] offset=0 Retry version=v1") == 1, "no Retry packet");
        d.Check(d.Count("integrity tag valid") == 1, "the Retry's integrity tag was not checked against the original DCID");
        d.Check(d.Count("TLS ClientHello") == 2, "the ClientHellos before and after the Retry are not both shown");
    }

    // --- Retry ---------------------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 9000 §8.1.2, §17.2.5: quiche's server answers our first Initial with a Retry; our client starts over with the
    /// token and a new ClientHello. Decoded with quiche's key log alone: the Initial CRYPTO stream restarts at offset 0,
    /// and the Handshake and 1-RTT secrets are found by the second ClientHello's random.
    /// </summary>
    [SkippableFact]
    public async Task RetryFromQuicheServerToOurClientDecodes()
    {
        byte[] file = Payload(200_000);
        (QuichePeer server, CaptureRelay relay) = await StartQuicheServerAsync("retry", new() { ["f"] = file });
        using (server)
        using (relay)
        {
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(ClientForQuiche(relay.EndPoint), QuicProvider.Managed, ct);
            AssertSame(file, await HqGetAsync(client, "f", ct));
            Assert.True(client.GetStatistics().Retried, "quiche's server sent no Retry");
            await CloseAsync(client);
        }

        AssertRetryDecoded(Decode("retry-quiche-server", _peerKeys));
    }

    /// <summary>The same sequence the other way: quiche's client follows our server's Retry (RequireRetry).</summary>
    [SkippableFact]
    public async Task RetryFromOurServerToQuicheClientDecodes()
    {
        await QuicheClientDownloadsAsync("retry", new() { ["a"] = Payload(30_000), ["b"] = Payload(70_000) }, o => o.RequireRetry = true);
        AssertRetryDecoded(Decode("retry-quiche-client", _peerKeys));
    }

    // --- coalesced packets, multiplexed transfer -------------------------------------------------------------------

    /// <summary>
    /// A plain hq-interop transfer, quiche's client against our server, three files on three streams: both first
    /// flights coalesce packets of several levels in one datagram (RFC 9000 §12.2), every one of them decoded.
    /// </summary>
    [SkippableFact]
    public async Task CoalescedPacketsInAQuicheTransferDecode()
    {
        await QuicheClientDownloadsAsync("multiplexing", new() { ["a"] = Payload(5_000), ["b"] = Payload(100_000), ["c"] = Payload(1_000) });
        DecodedCapture d = Decode("coalesced-quiche-client", _peerKeys);
        d.AssertComplete(connections: 1);
        int fromClient = 0, fromServer = 0;
        for (int i = 0; i + 1 < d.Lines.Length; i++)
        {
            if (!d.Lines[i].StartsWith("  [2] offset=", StringComparison.Ordinal)) continue;
            if (d.Lines[i + 1].Contains("from=client", StringComparison.Ordinal)) fromClient++;
            if (d.Lines[i + 1].Contains("from=server", StringComparison.Ordinal)) fromServer++;
        }

        d.Check(fromClient > 0 && fromServer > 0, $"coalesced packets: {fromClient} second packets from quiche's client, {fromServer} from our server");
        d.Check(d.Count("STREAM id=8 ") > 0, "the third stream's frames are missing");
    }

    // --- version negotiation ------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 9000 §6: our client's first Initial in QUIC v2, which quiche 0.18 does not speak: quiche answers with Version
    /// Negotiation (listing v1) and the attempt ends; the next connection, in v1, completes. Both connections decoded.
    /// </summary>
    [SkippableFact]
    public async Task VersionNegotiationFromQuicheServerDecodes()
    {
        byte[] file = Payload(20_000);
        (QuichePeer server, CaptureRelay relay) = await StartQuicheServerAsync("transfer", new() { ["f"] = file });
        using (server)
        using (relay)
        {
            QuicClientConnectionOptions v2Only = ClientForQuiche(relay.EndPoint);
            v2Only.ProtocolVersions = [QuicProtocolVersion.Version2];
            await Assert.ThrowsAnyAsync<Exception>(async () => await QuicConnection.ConnectAsync(v2Only, QuicProvider.Managed, Timeout(10)));

            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(ClientForQuiche(relay.EndPoint), QuicProvider.Managed, ct);
            AssertSame(file, await HqGetAsync(client, "f", ct));
            await CloseAsync(client);
        }

        // The v2 attempt's secrets are in our key log only (quiche never got that far); its Initial needs none.
        DecodedCapture d = Decode("version-negotiation-quiche-server", _peerKeys);
        d.AssertComplete(connections: 2, withoutHandshake: [1]);
        d.Check(d.Count("Initial version=v2") >= 1, "our v2 Initial is missing");
        d.Check(d.Count("VersionNegotiation version=0x00000000") >= 1, "no Version Negotiation packet");
        d.Check(d.Count("supported versions: v1") >= 1, "the Version Negotiation packet does not list v1");
        d.Check(d.Connections[1].Exists(l => l.Contains("TLS ClientHello", StringComparison.Ordinal)), "the v2 ClientHello is not shown");
    }

    /// <summary>
    /// RFC 9368 compatible version negotiation: our client starts in v1 offering v2, our server answers in v2; Initial
    /// keys of both versions, Handshake and 1-RTT keys with v2's labels (RFC 9369 §3.3.2). quiche 0.18 has no v2.
    /// </summary>
    [Fact]
    public async Task CompatibleVersionNegotiationV1ToV2Decodes()
    {
        var server = await StartOurServerAsync(o => o.ProtocolVersions = [QuicProtocolVersion.Version2, QuicProtocolVersion.Version1]);
        using (var relay = new CaptureRelay(server.Listener.LocalEndPoint, _capture))
        {
            QuicClientConnectionOptions options = ClientOptions(relay.EndPoint);
            options.ProtocolVersions = [QuicProtocolVersion.Version1, QuicProtocolVersion.Version2];
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(options, QuicProvider.Managed, ct);
            Assert.Equal(QuicProtocolVersion.Version2, client.NegotiatedProtocolVersion);
            await EchoAsync(client, 100_000, ct);
            await CloseAsync(client);
        }

        await StopAsync(server);
        DecodedCapture d = Decode("compatible-v1-to-v2", _ourKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Count("Initial version=v1") >= 1 && d.Count("Initial version=v2") >= 1, "Initials of both versions expected");
        d.Check(d.Count("Handshake version=v2") >= 2, "v2 Handshake packets from both sides expected");
        d.Check(d.Count("Handshake version=v1") == 0, "a v1 Handshake packet after the server chose v2");
    }

    // --- a capture with a gap ------------------------------------------------------------------------------------------

    /// <summary>
    /// A capture that missed a run of datagrams in the middle of a download (a full capture buffer), and holds another
    /// run twice, the copies 1000 datagrams late (both legs of a slow relay): busy connections send one-byte packet
    /// numbers, so after the gap packets are some windows later than RFC 9000 Appendix A.3's guess, and the late copies
    /// some windows earlier; every datagram the capture holds is still decrypted. Datagrams are held to 1452 bytes (on
    /// loopback discovery would raise them to 16,000) so the download spans enough packets for the gap and the copies.
    /// </summary>
    [Fact]
    public async Task CaptureWithAGapAndLateCopiesInADownloadDecodes()
    {
        var server = await StartOurServerAsync(configureConnection: o => o.MaxPathDatagramSize = 1452);
        using (var relay = new CaptureRelay(server.Listener.LocalEndPoint, _capture))
        {
            CancellationToken ct = Timeout();
            QuicClientConnectionOptions options = ClientOptions(relay.EndPoint);
            options.MaxPathDatagramSize = 1452;
            QuicConnection client = await QuicConnection.ConnectAsync(options, QuicProvider.Managed, ct);
            await EchoAsync(client, 2 << 20, ct);
            await CloseAsync(client);
        }

        await StopAsync(server);
        int recorded = _capture.Count;
        Assert.True(recorded > 1500, $"only {recorded} datagrams");
        _capture.RemoveRange(recorded / 3, 1000);
        _capture.RepeatRange(100, 300, 1400);
        DecodedCapture d = Decode("capture-gap", _ourKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Lines.Any(l => l.Contains("pn_len=1 ", StringComparison.Ordinal)), "no one-byte packet numbers: the gap tested nothing");
    }

    // --- 0-RTT --------------------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 9001 §4.6: a first connection leaves a ticket, the second sends its request in 0-RTT packets. Accepted by our
    /// server (early_data in EncryptedExtensions), or refused by a restarted server that does not accept early data (the
    /// data then goes again in 1-RTT). The 0-RTT packets decode with CLIENT_EARLY_TRAFFIC_SECRET either way.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ZeroRttAcceptedOrRejectedDecodes(bool accepted)
    {
        // The restarted server keeps the stateless reset key (RFC 9000 §10.3.2), as a deployment would: the first
        // client's late CONNECTION_CLOSE reaches it and is answered with a Stateless Reset the first server's tokens name.
        byte[] resetKey = RandomNumberGenerator.GetBytes(32);
        var server = await StartOurServerAsync(o => o.StatelessResetKey = resetKey, o => o.EnableEarlyData = true);
        var store = new QuicSessionTicketStore();
        using (var relay = new CaptureRelay(server.Listener.LocalEndPoint, _capture))
        {
            QuicClientConnectionOptions Options()
            {
                QuicClientConnectionOptions o = ClientOptions(relay.EndPoint);
                o.SessionTicketStore = store;
                o.EnableEarlyData = true;
                return o;
            }

            CancellationToken ct = Timeout();
            QuicConnection first = await QuicConnection.ConnectAsync(Options(), QuicProvider.Managed, ct);
            await EchoAsync(first, 2_000, ct);
            await CloseAsync(first);
            if (!accepted)
            {
                await StopAsync(server);
                server = await StartOurServerAsync(o => o.StatelessResetKey = resetKey, o => o.EnableEarlyData = false);
                relay.Server = server.Listener.LocalEndPoint;
            }

            // A 30 ms round trip: the request leaves in 0-RTT before the server's first flight arrives (on bare
            // loopback the handshake may be done before the stream is written).
            relay.ServerDelay = TimeSpan.FromMilliseconds(30);
            QuicConnection second = await QuicConnection.ConnectAsync(Options(), QuicProvider.Managed, ct);
            await EchoAsync(second, 3_000, ct);
            await second.WaitForHandshakeAsync(ct);
            Assert.Equal(accepted, second.IsEarlyDataAccepted);
            await CloseAsync(second);
        }

        await StopAsync(server);
        DecodedCapture d = Decode(accepted ? "zerortt-accepted" : "zerortt-rejected", _ourKeys);
        d.AssertComplete(connections: 2);
        List<string> second0Rtt = d.Connections[2];
        int zeroRttStream = 0;
        for (int i = 0; i + 2 < d.Lines.Length; i++)
        {
            if (d.Lines[i].Contains(" 0-RTT version=v1", StringComparison.Ordinal) && d.Lines[i + 2].Contains("STREAM id=0 ", StringComparison.Ordinal)) zeroRttStream++;
        }

        d.Check(zeroRttStream > 0, "no 0-RTT packet carrying the request's STREAM frame");
        d.Check(second0Rtt.Exists(l => l.Contains("extension early_data", StringComparison.Ordinal)), "the second ClientHello offers no early_data");
        int earlyDataLines = second0Rtt.FindAll(l => l.Contains("extension early_data", StringComparison.Ordinal)).Count;
        d.Check(accepted ? earlyDataLines >= 2 : earlyDataLines == 1,
            $"early_data {earlyDataLines} times in connection 2: the server's EncryptedExtensions must {(accepted ? "" : "not ")}accept it");
    }

    // --- key update -----------------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 9001 §6: our client updates its keys in the middle of a download from quiche's server, which answers in the
    /// new phase: 1-RTT packets of key phase 1 from both sides, opened with the next generation of the logged secrets.
    /// </summary>
    [SkippableFact]
    public async Task KeyUpdateAgainstQuicheServerDecodes()
    {
        (QuichePeer server, CaptureRelay relay) = await StartQuicheServerAsync("transfer", new() { ["f"] = Payload(1 << 20), ["g"] = Payload(200_000) });
        using (server)
        using (relay)
        {
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(ClientForQuiche(relay.EndPoint), QuicProvider.Managed, ct);
            Assert.Equal(1 << 20, (await HqGetAsync(client, "f", ct)).Length);
            while (!await client.UpdateKeysAsync(ct)) await Task.Delay(5, ct);
            Assert.Equal(200_000, (await HqGetAsync(client, "g", ct)).Length);
            Assert.Equal(1, client.GetStatistics().KeyUpdates);
            await CloseAsync(client);
        }

        DecodedCapture d = Decode("keyupdate-quiche-server", _peerKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Lines.Any(l => l.Contains("from=client", StringComparison.Ordinal) && l.Contains("key_phase=1", StringComparison.Ordinal)), "no client packet in key phase 1");
        d.Check(d.Lines.Any(l => l.Contains("from=server", StringComparison.Ordinal) && l.Contains("key_phase=1", StringComparison.Ordinal)), "no server packet in key phase 1");
    }

    // --- ClientHello over several Initials ----------------------------------------------------------------------------

    /// <summary>
    /// A ClientHello longer than one Initial (many long ALPN names: about 2.5 KB) goes to quiche's server in CRYPTO frames
    /// over several Initial packets; the dumper reassembles and shows it whole, and quiche picks hq-interop.
    /// </summary>
    [SkippableFact]
    public async Task ClientHelloSplitOverInitialsToQuicheDecodes()
    {
        byte[] file = Payload(10_000);
        (QuichePeer server, CaptureRelay relay) = await StartQuicheServerAsync("transfer", new() { ["f"] = file });
        using (server)
        using (relay)
        {
            QuicClientConnectionOptions options = ClientForQuiche(relay.EndPoint);
            var protocols = new List<SslApplicationProtocol>();
            for (int i = 0; i < 20; i++) protocols.Add(new SslApplicationProtocol($"x-unused-protocol-{i:d2}-" + new string('p', 100)));
            protocols.Add(new SslApplicationProtocol(Hq));
            options.ClientAuthenticationOptions.ApplicationProtocols = protocols;
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(options, QuicProvider.Managed, ct);
            Assert.Equal(Hq, client.NegotiatedApplicationProtocol.ToString());
            AssertSame(file, await HqGetAsync(client, "f", ct));
            await CloseAsync(client);
        }

        DecodedCapture d = Decode("clienthello-split-quiche-server", _peerKeys);
        d.AssertComplete(connections: 1);
        string? hello = d.Lines.FirstOrDefault(l => l.Contains("TLS ClientHello length=", StringComparison.Ordinal));
        d.Check(hello != null && int.Parse(hello.Trim().Split('=')[1], Globalization.CultureInfo.InvariantCulture) > 2000, $"ClientHello not longer than one Initial: {hello}");
        int clientInitialsWithCrypto = 0;
        foreach (string line in d.Connections[1])
        {
            if (line.Contains("TLS ServerHello", StringComparison.Ordinal)) break;
            if (line.Contains("CRYPTO offset=", StringComparison.Ordinal)) clientInitialsWithCrypto++;
        }

        d.Check(clientInitialsWithCrypto >= 2, $"the ClientHello came in {clientInitialsWithCrypto} CRYPTO frame(s)");
    }

    // --- HelloRetryRequest ---------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 8446 §4.1.4: ngtcp2's client (GnuTLS), told to prefer secp521r1, sends its only key share in that group,
    /// which our server does not support: it answers with a HelloRetryRequest for secp256r1 and the client sends a
    /// second ClientHello further along the same Initial CRYPTO stream. Our server closes once the handshake is done
    /// (gtlsclient speaks HTTP/3 only). Decoded with GnuTLS's key log.
    /// </summary>
    [SkippableFact]
    public async Task HelloRetryRequestToNgtcp2ClientDecodes()
    {
        string? gtlsclient = new[] { "/usr/bin/gtlsclient", "/usr/local/bin/gtlsclient" }.FirstOrDefault(File.Exists);
        Skip.If(gtlsclient == null, "ngtcp2's gtlsclient is not installed (Debian ngtcp2-client, installed by /work/shared/interop/peers.sh)");
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback, "h3");
        await using QuicListener listener = await QuicListener.ListenAsync(options, QuicProvider.Managed, CancellationToken.None);
        using var relay = new CaptureRelay(listener.LocalEndPoint, _capture);
        CancellationToken ct = Timeout();
        Task serve = Task.Run(async () =>
        {
            await using QuicConnection connection = await listener.AcceptConnectionAsync(ct);
            await Task.Delay(200, ct);
            await connection.CloseAsync(0x100, ct); // H3_NO_ERROR
            await Task.Delay(100, ct);
        }, ct);
        var info = new ProcessStartInfo(gtlsclient!)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string arg in new[]
                 {
                     "-q", "--exit-on-all-streams-close", "--timeout=5s", "--groups=-GROUP-ALL:+GROUP-SECP521R1:+GROUP-SECP256R1",
                     "127.0.0.1", relay.EndPoint.Port.ToString(Globalization.CultureInfo.InvariantCulture), $"https://127.0.0.1:{relay.EndPoint.Port}/",
                 })
        {
            info.ArgumentList.Add(arg);
        }

        info.Environment["SSLKEYLOGFILE"] = _peerKeys;
        using (var client = Process.Start(info)!)
        {
            try
            {
                Task<string> stdout = client.StandardOutput.ReadToEndAsync(ct);
                Task<string> stderr = client.StandardError.ReadToEndAsync(ct);
                await serve;
                await client.WaitForExitAsync(ct);
                await Task.WhenAll(stdout, stderr);
            }
            finally
            {
                if (!client.HasExited) client.Kill();
            }
        }

        DecodedCapture d = Decode("hello-retry-request-ngtcp2-client", _peerKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Count("(HelloRetryRequest)") == 1, "no HelloRetryRequest");
        d.Check(d.Count("TLS ClientHello") == 2, "the second ClientHello is not shown");
        d.Check(d.Lines.Any(l => l.Contains("key_share", StringComparison.Ordinal) && l.Contains("secp521r1", StringComparison.Ordinal)), "the first ClientHello's key share is not secp521r1");
    }

    // --- migration ----------------------------------------------------------------------------------------------------

    /// <summary>
    /// RFC 9000 §9: our client moves to a new local socket (MigrateAsync) in the middle of a download from our server;
    /// the relay gives the new address its own upstream, so the server sees the client migrate and validates the path.
    /// quiche's server is not used: quiche-hq.mjs issues no spare connection IDs.
    /// </summary>
    [Fact]
    public async Task ConnectionMigrationDecodes()
    {
        var server = await StartOurServerAsync();
        using (var relay = new CaptureRelay(server.Listener.LocalEndPoint, _capture))
        {
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(ClientOptions(relay.EndPoint), QuicProvider.Managed, ct);
            await EchoAsync(client, 50_000, ct);
            await client.MigrateAsync(null, ct);
            await EchoAsync(client, 300_000, ct);
            Assert.Equal(2, relay.ClientAddresses);
            await CloseAsync(client);
        }

        await StopAsync(server);
        DecodedCapture d = Decode("connection-migration", _ourKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Count("PATH_CHALLENGE") >= 1 && d.Count("PATH_RESPONSE") >= 1, "no path validation");
    }

    /// <summary>
    /// RFC 9000 §9.6: our server offers a preferred address; our client moves there after the handshake. The client
    /// reaches that address directly (the transport parameter names it), so the capture is our stack's own trace of the
    /// datagrams it sent (QuicEventSource), written as a pcap like the relay's.
    /// </summary>
    [Fact]
    public async Task PreferredAddressMigrationDecodes()
    {
        var preferred = new IPEndPoint(IPAddress.Loopback, FreeUdpPort());
        var server = await StartOurServerAsync(o => o.PreferredAddress = preferred);
        using (new DatagramTrace(_capture, server.Listener.LocalEndPoint.Port, preferred.Port))
        {
            CancellationToken ct = Timeout();
            QuicConnection client = await QuicConnection.ConnectAsync(ClientOptions(server.Listener.LocalEndPoint), QuicProvider.Managed, ct);
            await EchoAsync(client, 200_000, ct);
            while (!client.RemoteEndPoint.Equals(preferred)) await Task.Delay(20, ct);
            await EchoAsync(client, 100_000, ct);
            await CloseAsync(client);
        }

        await StopAsync(server);
        DecodedCapture d = Decode("preferred-address", _ourKeys);
        d.AssertComplete(connections: 1);
        d.Check(d.Count("preferred_address") >= 1, "the server's transport parameters show no preferred_address");
        d.Check(d.Count($"-> {preferred} ") >= 3, "no datagrams to the preferred address");
        d.Check(d.Count("PATH_CHALLENGE") >= 1 && d.Count("PATH_RESPONSE") >= 1, "no path validation");
    }
}
