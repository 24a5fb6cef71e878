using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using QuicManaged.Interop.HqInterop;
using QuicManaged.Interop.Http3;
using QuicManaged.Interop.Serving;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Runner;

/// <summary>Runs the client or server role of the quic-interop-runner contract over the QUIC transport.</summary>
internal static class InteropEndpointRunner
{
    /// <summary>Session tickets of this process: the resumption and zerortt cases resume the first connection's session.</summary>
    private static readonly QuicSessionTicketStore s_tickets = new();

    public static async Task<int> RunAsync(InteropConfiguration config, TextWriter log, CancellationToken cancellationToken)
    {
        InteropTestCase? testCase = InteropTestCase.Find(config.TestCase);
        if (testCase is null || !testCase.IsSupported(config.IsClient))
        {
            log.WriteLine($"test case '{config.TestCase}' is not supported as {(config.IsClient ? "client" : "server")}" + (testCase is null ? string.Empty : $": {testCase.Note}"));
            return InteropExitCode.Unsupported;
        }

        if (config.KeyLogFile is not null)
        {
            // The interop-runner contract: an endpoint given SSLKEYLOGFILE logs its secrets there (this program opts in).
            System.Net.Quic.Managed.QuicManagedDiagnostics.KeyLogFilePath = config.KeyLogFile;
            log.WriteLine($"key log: {config.KeyLogFile}");
        }

        if (config.QlogDirectory is not null)
        {
            System.Net.Quic.Managed.QuicManagedDiagnostics.QlogDirectory = config.QlogDirectory;
            log.WriteLine($"qlog: {config.QlogDirectory}");
        }

        return config.IsClient
            ? await RunClientAsync(config, testCase, log, cancellationToken).ConfigureAwait(false)
            : await RunServerAsync(config, testCase, log, cancellationToken).ConfigureAwait(false);
    }

    private static async Task<int> RunClientAsync(InteropConfiguration config, InteropTestCase testCase, TextWriter log, CancellationToken cancellationToken)
    {
        if (config.Requests.Count == 0 || string.IsNullOrEmpty(config.DownloadDirectory))
        {
            log.WriteLine("client needs REQUESTS and DOWNLOADS");
            return InteropExitCode.BadConfiguration;
        }

        Uri first = config.Requests[0];
        foreach (Uri uri in config.Requests)
        {
            if (uri.Authority != first.Authority)
            {
                log.WriteLine("all REQUESTS must share one authority (one connection)");
                return InteropExitCode.BadConfiguration;
            }
        }

        if (!QuicConnection.IsSupported)
        {
            log.WriteLine("the QUIC transport is not available yet (QuicConnection.IsSupported is false)");
            return InteropExitCode.Failure;
        }

        Directory.CreateDirectory(config.DownloadDirectory);
        string alpn = config.Alpn ?? testCase.Alpn;
        using CancellationTokenSource timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(config.Timeout);
        try
        {
            // resumption / zerortt: the first URL on one connection, the rest on a second connection in this process,
            // which can resume with the session ticket of the first (the runner's contract for these cases).
            bool twoConnections = testCase.Name is "resumption" or "zerortt" && config.Requests.Count > 1;
            IReadOnlyList<Uri> firstBatch = twoConnections ? [config.Requests[0]] : config.Requests;
            bool ok = await FetchOverOneConnectionAsync(config, testCase, alpn, first, firstBatch, log, timeout.Token).ConfigureAwait(false);
            if (ok && twoConnections)
            {
                List<Uri> rest = new(config.Requests.Count - 1);
                for (int i = 1; i < config.Requests.Count; i++)
                {
                    rest.Add(config.Requests[i]);
                }

                ok = await FetchOverOneConnectionAsync(config, testCase, alpn, first, rest, log, timeout.Token).ConfigureAwait(false);
            }

            return ok ? InteropExitCode.Success : InteropExitCode.Failure;
        }
        catch (OperationCanceledException)
        {
            log.WriteLine($"timed out after {config.Timeout.TotalSeconds:0} s");
            return InteropExitCode.Failure;
        }
        catch (Exception e) when (e is IOException or PlatformNotSupportedException or System.Security.Authentication.AuthenticationException or Http3ProtocolException
            or System.Net.Sockets.SocketException)
        {
            log.WriteLine($"connection failed: {e.GetType().Name}: {e.Message}");
            return InteropExitCode.Failure;
        }
    }

    private static async Task<bool> FetchOverOneConnectionAsync(InteropConfiguration config, InteropTestCase testCase, string alpn, Uri first, IReadOnlyList<Uri> urls, TextWriter log, CancellationToken cancellationToken)
    {
        bool resumes = testCase.Name is "resumption" or "zerortt";
        SslClientAuthenticationOptions tls = new()
        {
            ApplicationProtocols = [new SslApplicationProtocol(alpn)],
            TargetHost = first.IdnHost,
            // Interop only: the runner's certificates are self-signed.
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        };
        if (testCase.Name == "chacha20" && !OperatingSystem.IsWindows())
        {
            // The runner's chacha20 case: offer TLS_CHACHA20_POLY1305_SHA256 only.
            tls.CipherSuitesPolicy = new CipherSuitesPolicy([TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256]);
        }

        QuicClientConnectionOptions options = new()
        {
            RemoteEndPoint = IPAddress.TryParse(first.IdnHost, out IPAddress? literal)
                ? new IPEndPoint(literal, first.Port)
                : new DnsEndPoint(first.IdnHost, first.Port),
            DefaultStreamErrorCode = (long)Http3ErrorCode.RequestCancelled,
            DefaultCloseErrorCode = (long)Http3ErrorCode.NoError,
            MaxInboundUnidirectionalStreams = 8,
            ClientAuthenticationOptions = tls,
            SessionTicketStore = resumes ? s_tickets : null,
            // zerortt: with a ticket, ConnectAsync returns at once and the requests below leave as 0-RTT.
            EnableEarlyData = testCase.Name == "zerortt",
            // The runner's v2 case: the first Initial is v1, version_information offers v2 (compatible negotiation, RFC 9368).
            ProtocolVersions = testCase.Name == "v2" ? [QuicProtocolVersion.Version1, QuicProtocolVersion.Version2] : null,
        };
        QuicConnection connection = await QuicConnection.ConnectAsync(options, cancellationToken).ConfigureAwait(false);
        await using QuicMultiplexedConnection multiplexed = new(connection);
        if (testCase.Name == "activemigration") return await DownloadWhileMigratingAsync(connection, multiplexed, config, alpn, urls, log, cancellationToken).ConfigureAwait(false);
        if (testCase.Name != "keyupdate")
        {
            bool done = await InteropDownloader.RunAsync(multiplexed, alpn, urls, config.DownloadDirectory!, log, cancellationToken).ConfigureAwait(false);
            await connection.WaitForHandshakeAsync(cancellationToken).ConfigureAwait(false);
            // One greppable line per connection: the harness checks the negotiated suite (chacha20), resumption and 0-RTT.
            log.WriteLine($"connected {connection.LocalEndPoint} -> {connection.RemoteEndPoint}: alpn={connection.NegotiatedApplicationProtocol} cipher={connection.NegotiatedCipherSuite} resumed={connection.IsResumed} early_data_accepted={connection.IsEarlyDataAccepted}");
            LogPath(connection, log);
            if (resumes) await WaitForSessionTicketAsync(log, cancellationToken).ConfigureAwait(false);
            return done;
        }

        // The runner's keyupdate case: the client updates its keys once, early in the transfer, and keeps downloading.
        using CancellationTokenSource downloadsDone = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task<bool> keyUpdate = UpdateKeysOnceAsync(connection, log, downloadsDone.Token);
        bool ok = await InteropDownloader.RunAsync(multiplexed, alpn, urls, config.DownloadDirectory!, log, cancellationToken).ConfigureAwait(false);
        downloadsDone.Cancel();
        if (!await keyUpdate.ConfigureAwait(false))
        {
            log.WriteLine("keyupdate: the download ended before a key update could start");
            return false;
        }

        return ok;
    }

    /// <summary>
    /// The activemigration case (not a runner case): the client moves to a new local socket (QuicConnection.MigrateAsync,
    /// RFC 9000 §9.2) once 100 KB arrived, while the download goes on; fails when the download ends first or the move fails.
    /// </summary>
    private static async Task<bool> DownloadWhileMigratingAsync(QuicConnection connection, QuicMultiplexedConnection multiplexed, InteropConfiguration config,
        string alpn, IReadOnlyList<Uri> urls, TextWriter log, CancellationToken cancellationToken)
    {
        using CancellationTokenSource downloadsDone = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task<bool> migration = MigrateOnceAsync(connection, log, downloadsDone.Token);
        bool ok = await InteropDownloader.RunAsync(multiplexed, alpn, urls, config.DownloadDirectory!, log, cancellationToken).ConfigureAwait(false);
        downloadsDone.Cancel();
        log.WriteLine($"connected {connection.LocalEndPoint} -> {connection.RemoteEndPoint}: alpn={connection.NegotiatedApplicationProtocol} cipher={connection.NegotiatedCipherSuite}");
        if (!await migration.ConfigureAwait(false))
        {
            log.WriteLine("activemigration: the download ended before the migration completed");
            return false;
        }
        return ok;
    }

    private static async Task<bool> MigrateOnceAsync(QuicConnection connection, TextWriter log, CancellationToken cancellationToken)
    {
        try
        {
            await connection.WaitForHandshakeAsync(cancellationToken).ConfigureAwait(false);
            while (connection.GetStatistics().BytesReceived < 100_000) await Task.Delay(2, cancellationToken).ConfigureAwait(false);
            IPEndPoint before = connection.LocalEndPoint;
            // The handshake is confirmed a round trip after it completes (HANDSHAKE_DONE): ask again until allowed.
            while (true)
            {
                try
                {
                    await connection.MigrateAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
                    break;
                }
                catch (QuicException e) when (e.Message.Contains("confirmed", StringComparison.Ordinal) || e.Message.Contains("connection ID", StringComparison.Ordinal))
                {
                    await Task.Delay(5, cancellationToken).ConfigureAwait(false);
                }
            }
            log.WriteLine($"activemigration: moved from {before} to {connection.LocalEndPoint} after {connection.GetStatistics().BytesReceived} bytes, remote {connection.RemoteEndPoint}");
            return true;
        }
        catch (Exception e) when (e is OperationCanceledException or QuicException)
        {
            log.WriteLine($"activemigration: {e.GetType().Name}: {e.Message}");
            return false;
        }
    }

    /// <summary>The next connection resumes with this one's ticket, which the server sends after the handshake: wait for it (2 s at most).</summary>
    private static async Task WaitForSessionTicketAsync(TextWriter log, CancellationToken cancellationToken)
    {
        if (s_tickets.Count > 0) return;
        using CancellationTokenSource wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        wait.CancelAfter(TimeSpan.FromSeconds(2));
        try
        {
            while (s_tickets.Count == 0) await Task.Delay(10, wait.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            log.WriteLine("no session ticket arrived within 2 s: the next connection cannot resume");
        }
    }

    /// <summary>
    /// Starts one key update as soon as RFC 9001 §6 allows it: UpdateKeysAsync says no until the handshake is confirmed
    /// (HANDSHAKE_DONE) and a packet of the current phase was acknowledged, so ask again every few milliseconds.
    /// </summary>
    private static async Task<bool> UpdateKeysOnceAsync(QuicConnection connection, TextWriter log, CancellationToken cancellationToken)
    {
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        try
        {
            while (!await connection.UpdateKeysAsync(cancellationToken).ConfigureAwait(false))
            {
                await Task.Delay(2, cancellationToken).ConfigureAwait(false);
            }

            QuicConnectionStatistics stats = connection.GetStatistics();
            log.WriteLine($"keyupdate: started a key update {System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalMilliseconds:0} ms after the handshake, {stats.BytesReceived} bytes received so far");
            return true;
        }
        catch (Exception e) when (e is OperationCanceledException or QuicException)
        {
            return false;
        }
    }

    /// <summary>PREFERRED_ADDRESS (ip:port) when set, else the listen address with port + 2 (null for a wildcard address).</summary>
    private static IPEndPoint? PreferredAddressFor(IPAddress listen, int port)
    {
        if (Environment.GetEnvironmentVariable("PREFERRED_ADDRESS") is { Length: > 0 } configured && IPEndPoint.TryParse(configured, out IPEndPoint? given)) return given;
        return listen.Equals(IPAddress.Any) || listen.Equals(IPAddress.IPv6Any) ? null : new IPEndPoint(listen, port + 2);
    }

    private static async Task<int> RunServerAsync(InteropConfiguration config, InteropTestCase testCase, TextWriter log, CancellationToken cancellationToken)
    {
        if (string.IsNullOrEmpty(config.WwwDirectory) || string.IsNullOrEmpty(config.CertificateDirectory))
        {
            log.WriteLine("server needs WWW and CERTS");
            return InteropExitCode.BadConfiguration;
        }

        if (!IPAddress.TryParse(config.Host, out IPAddress? address))
        {
            log.WriteLine($"HOST '{config.Host}' is not an IP address");
            return InteropExitCode.BadConfiguration;
        }

        X509Certificate2 certificate;
        try
        {
            certificate = X509Certificate2.CreateFromPemFile(
                Path.Combine(config.CertificateDirectory, "cert.pem"),
                Path.Combine(config.CertificateDirectory, "priv.key"));
        }
        catch (Exception e) when (e is IOException or System.Security.Cryptography.CryptographicException or UnauthorizedAccessException)
        {
            log.WriteLine($"cannot load CERTS/cert.pem and CERTS/priv.key: {e.Message}");
            return InteropExitCode.BadConfiguration;
        }

        if (!QuicListener.IsSupported)
        {
            log.WriteLine("the QUIC transport is not available yet (QuicListener.IsSupported is false)");
            certificate.Dispose();
            return InteropExitCode.Failure;
        }

        FileRoot root = new(config.WwwDirectory);
        string alpn = config.Alpn ?? testCase.Alpn;
        using (certificate)
        {
            try
            {
                QuicListenerOptions options = new()
                {
                    ListenEndPoint = new IPEndPoint(address, config.Port),
                    // The runner's retry case: every new client must come back with a Retry token (RFC 9000 §8.1.2).
                    RequireRetry = testCase.Name == "retry",
                    // The runner's v2 case: v1 clients that offer v2 are answered in v2 (compatible negotiation, RFC 9368).
                    ProtocolVersions = testCase.Name == "v2" ? [QuicProtocolVersion.Version2, QuicProtocolVersion.Version1] : null,
                    // The runner's connectionmigration case: a preferred address (RFC 9000 §9.6) the clients move to.
                    PreferredAddress = testCase.Name == "connectionmigration" ? PreferredAddressFor(address, config.Port) : null,
                    ApplicationProtocols = [new SslApplicationProtocol(alpn)],
                    ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
                    {
                        DefaultStreamErrorCode = (long)Http3ErrorCode.RequestCancelled,
                        DefaultCloseErrorCode = (long)Http3ErrorCode.NoError,
                        MaxInboundBidirectionalStreams = 1000,
                        MaxInboundUnidirectionalStreams = 8,
                        // Session tickets are always sent (resumption); 0-RTT is accepted for the zerortt case only.
                        EnableEarlyData = testCase.Name == "zerortt",
                        // siduck: DATAGRAM frames (RFC 9221) are accepted and answered.
                        MaxDatagramFrameSize = alpn == InteropTestCase.AlpnSiduck ? 65535 : 0,
                        ServerAuthenticationOptions = new SslServerAuthenticationOptions
                        {
                            ApplicationProtocols = [new SslApplicationProtocol(alpn)],
                            ServerCertificate = certificate,
                        },
                    }),
                };
                await using QuicListener listener = await QuicListener.ListenAsync(options, cancellationToken).ConfigureAwait(false);
                log.WriteLine($"listening on {listener.LocalEndPoint} ({alpn}), serving {root.Directory}");
                // The server runs until the runner stops it (SIGTERM -> cancellation).
                while (!cancellationToken.IsCancellationRequested)
                {
                    QuicConnection connection;
                    try
                    {
                        connection = await listener.AcceptConnectionAsync(cancellationToken).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is QuicException or System.Security.Authentication.AuthenticationException or ArgumentException)
                    {
                        // One client's failed handshake (as System.Net.Quic, AcceptConnectionAsync reports it) does not stop the server.
                        log.WriteLine($"handshake failed: {e.GetType().Name}: {e.Message}");
                        continue;
                    }

                    _ = ServeConnectionAsync(connection, alpn, root, log, cancellationToken);
                }

                return InteropExitCode.Success;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return InteropExitCode.Success;
            }
            catch (Exception e) when (e is IOException or PlatformNotSupportedException)
            {
                log.WriteLine($"listener failed: {e.GetType().Name}: {e.Message}");
                return InteropExitCode.Failure;
            }
        }
    }

    private static async Task ServeConnectionAsync(QuicConnection connection, string alpn, FileRoot root, TextWriter log, CancellationToken cancellationToken)
    {
        if (alpn == InteropTestCase.AlpnSiduck)
        {
            await ServeSiduckAsync(connection, log, cancellationToken).ConfigureAwait(false);
            return;
        }

        await using QuicMultiplexedConnection multiplexed = new(connection);
        try
        {
            if (alpn == InteropTestCase.AlpnH3)
            {
                var server = new Http3Server(multiplexed, root);
                try
                {
                    await server.RunAsync(cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    if (server.Session.Qpack is QpackDecoderSession qpack)
                    {
                        log.WriteLine($"qpack: {qpack.EncoderStreamBytes} encoder-stream bytes, {qpack.InsertCount} dynamic table inserts");
                    }
                }
            }
            else
            {
                await new HqServer(multiplexed, root).RunAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or Http3ProtocolException)
        {
            log.WriteLine($"connection ended: {e.GetType().Name}: {e.Message}");
        }
        finally
        {
            LogPath(connection, log);
        }
    }

    /// <summary>
    /// One greppable line per connection about the path: ECN validation and counts in both directions
    /// (received: what we saw; reported: what the peer's ACK_ECN frames said it saw of ours) and the datagram size path
    /// MTU discovery reached.
    /// </summary>
    private static void LogPath(QuicConnection connection, TextWriter log)
    {
        QuicConnectionStatistics s = connection.GetStatistics();
        log.WriteLine($"path {connection.RemoteEndPoint}: ecn_validated={s.EcnValidated} ect0_reported_by_peer={s.EcnEct0PacketsReportedByPeer} ce_reported_by_peer={s.EcnCePacketsReportedByPeer} ect0_received={s.EcnEct0PacketsReceived} ce_received={s.EcnCePacketsReceived} max_datagram={s.PathMaxDatagramSize} sent={s.DatagramsSent} lost={s.PacketsLost}");
    }

    /// <summary>siduck: every DATAGRAM payload comes back with "-ack" appended ("quack" becomes "quack-ack").</summary>
    private static async Task ServeSiduckAsync(QuicConnection connection, TextWriter log, CancellationToken cancellationToken)
    {
        await using (connection)
        {
            try
            {
                while (true)
                {
                    ReadOnlyMemory<byte> quack = await connection.ReceiveDatagramAsync(cancellationToken).ConfigureAwait(false);
                    byte[] reply = new byte[quack.Length + 4];
                    quack.CopyTo(reply);
                    "-ack"u8.CopyTo(reply.AsSpan(quack.Length));
                    QuicDatagramSendResult result = await connection.SendDatagramAsync(reply, cancellationToken).ConfigureAwait(false);
                    log.WriteLine($"siduck: {System.Text.Encoding.ASCII.GetString(quack.Span)} -> {System.Text.Encoding.ASCII.GetString(reply)} ({result})");
                }
            }
            catch (Exception e) when (e is QuicException or OperationCanceledException)
            {
                log.WriteLine($"connection ended: {e.GetType().Name}: {e.Message}");
            }
        }
    }
}
