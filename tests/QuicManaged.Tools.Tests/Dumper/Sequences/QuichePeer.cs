using System.Diagnostics;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

/// <summary>
/// Cloudflare's quiche as a second stack: tests/interop/quiche/quiche-hq.mjs (an hq-interop client or server on quiche's
/// own Config/Connection) run by Node.js on the binding npm's @matrixai/quic-linux-x64 ships prebuilt, installed by
/// tests/interop/quiche/install.sh into a cache folder outside the repository. Tests skip, saying why, without it.
/// </summary>
internal sealed class QuichePeer : IDisposable
{
    private static readonly Lazy<(string? Node, string? Binding, string Reason)> s_install = new(Install);
    private readonly Process _process;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly Text.StringBuilder _log = new();

    private QuichePeer(Process process)
    {
        _process = process;
        _process.OutputDataReceived += (_, e) => Append(e.Data);
        _process.ErrorDataReceived += (_, e) => Append(e.Data);
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public string Log
    {
        get
        {
            lock (_log) return _log.ToString();
        }
    }

    public static string Script => Path.Combine(RepositoryPaths.Root, "tests", "interop", "quiche", "quiche-hq.mjs");

    /// <summary>Skips the test when quiche cannot be installed here.</summary>
    public static void SkipIfUnavailable()
    {
        (string? node, string? binding, string reason) = s_install.Value;
        Skip.If(node == null || binding == null, reason);
    }

    /// <summary>The files a quiche server serves and the certificate it presents (self-signed; our client accepts any).</summary>
    public static string CreateServerDirectory(IReadOnlyDictionary<string, byte[]> files)
    {
        string dir = Directory.CreateTempSubdirectory("quiche-peer-").FullName;
        Directory.CreateDirectory(Path.Combine(dir, "www"));
        foreach ((string name, byte[] data) in files) File.WriteAllBytes(Path.Combine(dir, "www", name), data);
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        var san = new SubjectAlternativeNameBuilder();
        san.AddDnsName("localhost");
        san.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(san.Build());
        using X509Certificate2 certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(7));
        File.WriteAllText(Path.Combine(dir, "cert.pem"), certificate.ExportCertificatePem());
        File.WriteAllText(Path.Combine(dir, "priv.key"), key.ExportPkcs8PrivateKeyPem());
        return dir;
    }

    /// <summary>Starts a quiche hq-interop server on 127.0.0.1:<paramref name="port"/> serving <paramref name="directory"/>.</summary>
    public static async Task<QuichePeer> StartServerAsync(string testCase, int port, string directory, string keyLog)
    {
        var peer = Start(new()
        {
            ["ROLE"] = "server",
            ["TESTCASE"] = testCase,
            ["BIND"] = $"127.0.0.1:{port}",
            ["WWW"] = Path.Combine(directory, "www"),
            ["CERTS"] = directory,
            ["SSLKEYLOGFILE"] = keyLog,
        });
        var deadline = Stopwatch.StartNew();
        while (!peer.Log.Contains("hq-interop server", StringComparison.Ordinal))
        {
            if (peer._process.HasExited || deadline.Elapsed > TimeSpan.FromSeconds(15))
            {
                string log = peer.Log;
                peer.Dispose();
                throw new InvalidOperationException($"quiche server did not start: {log}");
            }

            await Task.Delay(20);
        }

        return peer;
    }

    /// <summary>Runs a quiche hq-interop client that downloads <paramref name="files"/> from <paramref name="server"/>.</summary>
    public static async Task<(int ExitCode, string Log)> RunClientAsync(string testCase, IPEndPoint server, string downloads, string keyLog, params string[] files)
    {
        using QuichePeer peer = Start(new()
        {
            ["ROLE"] = "client",
            ["TESTCASE"] = testCase,
            ["REQUESTS"] = string.Join(' ', files.Select(f => $"https://{server}/{f}")),
            ["DOWNLOADS"] = downloads,
            ["SSLKEYLOGFILE"] = keyLog,
            ["QUICHE_TIMEOUT_SECONDS"] = "20",
        });
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await peer._process.WaitForExitAsync(timeout.Token);
        return (peer._process.ExitCode, peer.Log);
    }

    private static QuichePeer Start(Dictionary<string, string> environment)
    {
        (string? node, string? binding, _) = s_install.Value;
        var info = new ProcessStartInfo(node!, Script)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.Environment["QUICHE_BINDING"] = binding!;
        foreach ((string name, string value) in environment) info.Environment[name] = value;
        return new QuichePeer(Process.Start(info)!);
    }

    private void Append(string? line)
    {
        if (line == null) return;
        lock (_log) _log.Append(_clock.ElapsedMilliseconds).Append(" ms ").AppendLine(line);
    }

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill();
                _process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        _process.Dispose();
    }

    private static (string? Node, string? Binding, string Reason) Install()
    {
        string script = Path.Combine(RepositoryPaths.Root, "tests", "interop", "quiche", "install.sh");
        var info = new ProcessStartInfo("bash", [script])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        try
        {
            using Process process = Process.Start(info)!;
            Task<string> output = process.StandardOutput.ReadToEndAsync();
            Task<string> error = process.StandardError.ReadToEndAsync();
            if (!process.WaitForExit(180_000))
            {
                process.Kill();
                return (null, null, "quiche: tests/interop/quiche/install.sh took more than 180 s");
            }

            string? node = null, binding = null;
            foreach (string line in output.Result.Split('\n'))
            {
                if (line.StartsWith("NODE=", StringComparison.Ordinal)) node = line[5..].Trim();
                if (line.StartsWith("QUICHE_BINDING=", StringComparison.Ordinal)) binding = line[15..].Trim();
            }

            if (process.ExitCode != 0 || node is not { Length: > 0 } || binding is not { Length: > 0 } || !File.Exists(binding))
            {
                return (null, null, $"quiche not installable here (tests/interop/quiche/install.sh exit {process.ExitCode}: {error.Result.Trim()})");
            }

            return (node, binding, "");
        }
        catch (Exception e) when (e is ComponentModel.Win32Exception or IOException)
        {
            return (null, null, $"quiche: cannot run bash for tests/interop/quiche/install.sh ({e.Message})");
        }
    }
}
