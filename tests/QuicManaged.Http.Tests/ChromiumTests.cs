using System.Diagnostics;
using System.Text.Json;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>
/// Headless Chromium (Debian's chromium package) loads the sample app's page over HTTP/3 from Kestrel on our transport:
/// QUIC forced for the origin, the self-signed certificate pinned by its SPKI hash, the page fetching several hundred KB in
/// parallel and checking every byte; Chromium's net log must show a QUIC session that completed its handshake.
/// </summary>
public sealed class ChromiumTests
{
    internal static string? FindExecutable(params string[] names)
    {
        string[] path = (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries);
        foreach (string name in names)
        {
            foreach (string dir in path.Concat(["/usr/bin", "/usr/sbin", "/usr/local/bin"]))
            {
                string candidate = Path.Combine(dir, name);
                if (File.Exists(candidate))
                {
                    return candidate;
                }
            }
        }

        return null;
    }

    [SkippableFact]
    public async Task HeadlessChromium_LoadsSamplePageOverHttp3_BytesCheckedAndQuicSessionInNetLog()
    {
        string? chromium = FindExecutable("chromium", "chromium-browser", "google-chrome");
        Skip.If(chromium is null, "chromium is not installed (Debian: apt-get install chromium; test.sh installs it when run as root)");

        // HTTP/3 only: the page cannot come over TCP, so it loading at all already means QUIC worked.
        await using SampleServer server = await SampleServer.StartAsync(HttpProtocols.Http3);
        string dir = Directory.CreateTempSubdirectory("qm-chromium-").FullName;
        try
        {
            string netLog = Path.Combine(dir, "netlog.json");
            string origin = $"127.0.0.1:{server.Port}";
            var start = new ProcessStartInfo(chromium!)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (string arg in new[]
            {
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                $"--user-data-dir={Path.Combine(dir, "profile")}",
                "--enable-quic", $"--origin-to-force-quic-on={origin}",
                $"--ignore-certificate-errors-spki-list={SampleApp.SpkiSha256Base64(server.Certificate)}",
                $"--log-net-log={netLog}",
                "--virtual-time-budget=30000",
                "--dump-dom", $"https://{origin}/",
            })
            {
                start.ArgumentList.Add(arg);
            }

            using var process = Process.Start(start)!;
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            try
            {
                await process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                Assert.Fail("chromium did not finish within 90 s: " + Tail(await stderr));
            }

            string dom = await stdout;
            Assert.True(dom.Contains("PASS n=6 bytes=758752", StringComparison.Ordinal),
                $"the page did not report its bytes as checked: {ResultLine(dom)}; stderr: {Tail(await stderr)}");
            AssertNetLogHasQuicHandshake(netLog);
        }
        finally
        {
            try
            {
                Directory.Delete(dir, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    /// <summary>Net log events carry numeric types; the constants section names them.</summary>
    private static void AssertNetLogHasQuicHandshake(string path)
    {
        Assert.True(File.Exists(path), "chromium wrote no net log");
        using JsonDocument log = JsonDocument.Parse(File.ReadAllText(path));
        JsonElement constants = log.RootElement.GetProperty("constants");
        var eventTypes = constants.GetProperty("logEventTypes").EnumerateObject().ToDictionary(p => p.Value.GetInt32(), p => p.Name);
        var sourceTypes = constants.GetProperty("logSourceType").EnumerateObject().ToDictionary(p => p.Value.GetInt32(), p => p.Name);
        var seen = new HashSet<string>();
        foreach (JsonElement e in log.RootElement.GetProperty("events").EnumerateArray())
        {
            if (sourceTypes.GetValueOrDefault(e.GetProperty("source").GetProperty("type").GetInt32()) == "QUIC_SESSION")
            {
                seen.Add(eventTypes.GetValueOrDefault(e.GetProperty("type").GetInt32()) ?? "?");
            }
        }

        Assert.True(seen.Contains("QUIC_SESSION"), "no QUIC session in chromium's net log");
        Assert.True(seen.Contains("QUIC_SESSION_CRYPTO_HANDSHAKE_COMPLETE") && seen.Contains("QUIC_SESSION_HANDSHAKE_DONE_FRAME_RECEIVED"),
            "the QUIC session has no completed handshake; its events: " + string.Join(", ", seen.Order()));
        Assert.True(seen.Contains("HTTP3_SETTINGS_RECEIVED") && seen.Contains("HTTP3_HEADERS_RECEIVED"), "no HTTP/3 exchange on the QUIC session");
    }

    private static string ResultLine(string dom)
    {
        int at = dom.IndexOf("<pre id=\"result\">", StringComparison.Ordinal);
        return at < 0 ? "(no result element) " + Tail(dom) : dom.Substring(at, Math.Min(200, dom.Length - at));
    }

    private static string Tail(string text) => text.Length <= 2000 ? text : text[^2000..];
}
