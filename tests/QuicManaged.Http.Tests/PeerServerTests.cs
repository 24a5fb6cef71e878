using System.Diagnostics;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using QuicManaged.Samples;
using Xunit.Abstractions;

namespace QuicManaged.Http.Tests;

/// <summary>
/// Our HTTP/3 handler against independent HTTP/3 servers on loopback: Debian's Caddy, ngtcp2's example server
/// (gtlsserver) and quic-go's example server (built by ../shared/interop/peers.sh). GET and POST with large bodies,
/// byte-exact. Each test skips, saying why, when its server is not installed.
/// </summary>
public sealed class PeerServerTests(ITestOutputHelper output)
{
    private const int FileSize = 3 * 1024 * 1024 + 5;

    private static string? FindPeer(string envVar, params string[] candidates)
    {
        string? fromEnv = Environment.GetEnvironmentVariable(envVar);
        if (!string.IsNullOrEmpty(fromEnv) && File.Exists(fromEnv))
        {
            return fromEnv;
        }

        foreach (string candidate in candidates)
        {
            string? found = candidate.Contains('/', StringComparison.Ordinal) ? (File.Exists(candidate) ? candidate : null) : ChromiumTests.FindExecutable(candidate);
            if (found is not null)
            {
                return found;
            }
        }

        return null;
    }

    private static string PeerCache => Environment.GetEnvironmentVariable("QUIC_PEERS_DIR")
        ?? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".cache", "quic-peers");

    /// <summary>A temp directory with the sample certificate and key as PEM and a www/ holding big.bin (random bytes).</summary>
    private sealed class PeerFiles : IDisposable
    {
        public PeerFiles()
        {
            Dir = Directory.CreateTempSubdirectory("qm-peer-").FullName;
            using X509Certificate2 certificate = SampleApp.CreateSelfSignedCertificate();
            File.WriteAllText(CertPath, certificate.ExportCertificatePem());
            using ECDsa key = certificate.GetECDsaPrivateKey()!;
            File.WriteAllText(KeyPath, key.ExportPkcs8PrivateKeyPem());
            Directory.CreateDirectory(Www);
            Big = RandomNumberGenerator.GetBytes(FileSize);
            File.WriteAllBytes(Path.Combine(Www, "big.bin"), Big);
        }

        public string Dir { get; }

        public string CertPath => Path.Combine(Dir, "cert.pem");

        public string KeyPath => Path.Combine(Dir, "key.pem");

        public string Www => Path.Combine(Dir, "www");

        public byte[] Big { get; }

        public void Dispose()
        {
            try
            {
                Directory.Delete(Dir, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    private static Process StartPeer(string path, string? workingDirectory, IDictionary<string, string>? environment, params string[] args)
    {
        var start = new ProcessStartInfo(path)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? Environment.CurrentDirectory,
        };
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        if (environment is not null)
        {
            foreach ((string key, string value) in environment)
            {
                start.Environment[key] = value;
            }
        }

        Process process = Process.Start(start)!;
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static void Stop(Process process)
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        process.Dispose();
    }

    /// <summary>GET /big.bin, retrying while the server starts up (it prints nothing useful to wait on).</summary>
    private static async Task<byte[]> GetWhenUpAsync(HttpClient client, Uri uri, Process peer, CancellationToken cancellationToken)
    {
        for (int attempt = 0; ; attempt++)
        {
            try
            {
                return await client.GetByteArrayAsync(uri, cancellationToken);
            }
            catch (Exception ex) when ((ex is HttpRequestException || ex is TaskCanceledException { InnerException: TimeoutException }) && attempt < 20 && !peer.HasExited)
            {
                await Task.Delay(250, cancellationToken);
            }
        }
    }

    [SkippableFact]
    public async Task Caddy_GetFileAndPostEchoThroughReverseProxy_ByteExact()
    {
        string? caddy = FindPeer("CADDY", "caddy");
        Skip.If(caddy is null, "caddy is not installed (Debian: apt-get install caddy; test.sh installs it when run as root)");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        using var files = new PeerFiles();
        await using SampleServer backend = await SampleServer.StartPlainHttpAsync();
        int port = SampleServer.FreePort();
        string caddyfile = Path.Combine(files.Dir, "Caddyfile");
        File.WriteAllText(caddyfile, $$"""
            {
                admin off
                auto_https off
                default_sni 127.0.0.1
                storage file_system {{files.Dir}}/storage
                servers {
                    protocols h1 h2 h3
                }
            }
            https://127.0.0.1:{{port}} {
                tls {{files.CertPath}} {{files.KeyPath}}
                handle /echo {
                    reverse_proxy 127.0.0.1:{{backend.Port}}
                }
                handle {
                    root * {{files.Www}}
                    file_server
                }
            }
            """);
        var environment = new Dictionary<string, string> { ["HOME"] = files.Dir, ["XDG_DATA_HOME"] = files.Dir, ["XDG_CONFIG_HOME"] = files.Dir };
        Process peer = StartPeer(caddy!, files.Dir, environment, "run", "--config", caddyfile, "--adapter", "caddyfile");
        try
        {
            using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
            handler.ConnectTimeout = TimeSpan.FromSeconds(2);
            Uri baseUri = new($"https://127.0.0.1:{port}");
            Assert.Equal(files.Big, await GetWhenUpAsync(client, new Uri(baseUri, "/big.bin"), peer, timeout.Token));

            byte[] body = RandomNumberGenerator.GetBytes(2 * 1024 * 1024 + 7);
            using HttpResponseMessage echo = await client.PostAsync(new Uri(baseUri, "/echo"), new ByteArrayContent(body), timeout.Token);
            Assert.Equal(HttpStatusCode.OK, echo.StatusCode);
            Assert.Equal(HttpVersion.Version30, echo.Version);
            Assert.Equal(body, await echo.Content.ReadAsByteArrayAsync(timeout.Token));
        }
        finally
        {
            Stop(peer);
        }
    }

    [SkippableFact]
    public async Task Ngtcp2Server_GetAndPostLargeBodies_ByteExact()
    {
        string? server = FindPeer("GTLSSERVER", "gtlsserver", "/usr/sbin/gtlsserver", "/usr/bin/gtlsserver");
        Skip.If(server is null, "ngtcp2's gtlsserver is not installed (../shared/interop/peers.sh installs Debian's ngtcp2-server)");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        using var files = new PeerFiles();
        int port = SampleServer.FreePort();
        Process peer = StartPeer(server!, files.Dir, null, "-q", "-d", files.Www, "127.0.0.1", port.ToString(System.Globalization.CultureInfo.InvariantCulture), files.KeyPath, files.CertPath);
        try
        {
            using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
            handler.ConnectTimeout = TimeSpan.FromSeconds(2);
            Uri big = new($"https://127.0.0.1:{port}/big.bin");
            Assert.Equal(files.Big, await GetWhenUpAsync(client, big, peer, timeout.Token));

            // ngtcp2's example server reads and discards a request body, then serves the path: the POST must go through whole.
            byte[] body = RandomNumberGenerator.GetBytes(2 * 1024 * 1024 + 7);
            using HttpResponseMessage post = await client.PostAsync(big, new ByteArrayContent(body), timeout.Token);
            Assert.Equal(HttpStatusCode.OK, post.StatusCode);
            Assert.Equal(files.Big, await post.Content.ReadAsByteArrayAsync(timeout.Token));
        }
        finally
        {
            Stop(peer);
        }
    }

    /// <summary>
    /// ngtcp2's server encodes with nghttp3, whose QPACK encoder uses the dynamic table when the peer allows it: we
    /// advertise a 4096-byte table and 16 blocked streams, so its response headers arrive as encoder-stream inserts and
    /// dynamic references. Several sequential and parallel GETs, byte-exact, and the table really received inserts.
    /// </summary>
    [SkippableFact]
    public async Task Ngtcp2Server_EncoderUsesOurDynamicTable_GetsByteExact()
    {
        string? server = FindPeer("GTLSSERVER", "gtlsserver", "/usr/sbin/gtlsserver", "/usr/bin/gtlsserver");
        Skip.If(server is null, "ngtcp2's gtlsserver is not installed (../shared/interop/peers.sh installs Debian's ngtcp2-server)");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        using var files = new PeerFiles();
        byte[] small = RandomNumberGenerator.GetBytes(10_000);
        File.WriteAllBytes(Path.Combine(files.Www, "small.bin"), small);
        int port = SampleServer.FreePort();
        Process peer = StartPeer(server!, files.Dir, null, "-q", "-d", files.Www, "127.0.0.1", port.ToString(System.Globalization.CultureInfo.InvariantCulture), files.KeyPath, files.CertPath);
        try
        {
            using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
            handler.ConnectTimeout = TimeSpan.FromSeconds(2);
            Uri big = new($"https://127.0.0.1:{port}/big.bin");
            Uri smallUri = new($"https://127.0.0.1:{port}/small.bin");
            Assert.Equal(files.Big, await GetWhenUpAsync(client, big, peer, timeout.Token));
            for (int i = 0; i < 3; i++)
            {
                Assert.Equal(small, await client.GetByteArrayAsync(smallUri, timeout.Token));
            }

            byte[][] parallel = await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => client.GetByteArrayAsync(smallUri, timeout.Token)));
            Assert.All(parallel, body => Assert.Equal(small, body));
            Assert.Equal(files.Big, await client.GetByteArrayAsync(big, timeout.Token));

            Http3ClientConnection connection = handler.GetPooledConnection(big) ?? throw new InvalidOperationException("no pooled connection");
            Assert.True(connection.Qpack.EncoderStreamBytes > 0, "nghttp3 sent nothing on its QPACK encoder stream");
            Assert.True(connection.Qpack.InsertCount > 0, $"no dynamic table inserts ({connection.Qpack.EncoderStreamBytes} encoder-stream bytes)");
            output.WriteLine($"nghttp3 encoder stream: {connection.Qpack.EncoderStreamBytes} bytes, {connection.Qpack.InsertCount} inserts, table {connection.Qpack.Table.Size}/{connection.Qpack.Table.Capacity} bytes");
        }
        finally
        {
            Stop(peer);
        }
    }

    [SkippableFact]
    public async Task QuicGoServer_GetFileAndPostEcho_ByteExact()
    {
        string? server = FindPeer("QGO_SERVER", Path.Combine(PeerCache, "qgo-server"));
        Skip.If(server is null, "quic-go's example server is not built (../shared/interop/peers.sh builds it into ~/.cache/quic-peers)");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        using var files = new PeerFiles();
        int port = SampleServer.FreePort();
        Process peer = StartPeer(server!, files.Dir, null, "-bind", $"127.0.0.1:{port}", "-www", files.Www);
        try
        {
            using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
            handler.ConnectTimeout = TimeSpan.FromSeconds(2);
            Uri baseUri = new($"https://127.0.0.1:{port}");
            Assert.Equal(files.Big, await GetWhenUpAsync(client, new Uri(baseUri, "/big.bin"), peer, timeout.Token));

            byte[] body = RandomNumberGenerator.GetBytes(2 * 1024 * 1024 + 7);
            using HttpResponseMessage echo = await client.PostAsync(new Uri(baseUri, "/demo/echo"), new ByteArrayContent(body), timeout.Token);
            Assert.Equal(HttpStatusCode.OK, echo.StatusCode);
            Assert.Equal(body, await echo.Content.ReadAsByteArrayAsync(timeout.Token));
        }
        finally
        {
            Stop(peer);
        }
    }
}
