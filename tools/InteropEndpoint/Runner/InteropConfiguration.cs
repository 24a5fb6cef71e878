using System.Globalization;

namespace QuicManaged.Interop.Runner;

/// <summary>The quic-interop-runner environment contract, read from a variable lookup so tests need no process environment.</summary>
internal sealed class InteropConfiguration
{
    public const int DefaultTimeoutSeconds = 60;

    public required bool IsClient { get; init; }
    public required string TestCase { get; init; }
    public IReadOnlyList<Uri> Requests { get; init; } = [];
    public string? WwwDirectory { get; init; }
    public string? DownloadDirectory { get; init; }
    public string? CertificateDirectory { get; init; }
    public string? KeyLogFile { get; init; }
    public string? QlogDirectory { get; init; }

    /// <summary>
    /// ALPN override (variable ALPN: "h3", "hq-interop" or "siduck"). The runner uses hq-interop for every case but http3; peers
    /// that speak only HTTP/3 (ngtcp2's and quic-go's example tools) need h3 for all of them; "siduck" (server) answers
    /// DATAGRAM quacks (RFC 9221), as msquic's quicinterop datagram test expects.
    /// </summary>
    public string? Alpn { get; init; }
    public string Host { get; init; } = "::";
    public int Port { get; init; } = 443;
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(DefaultTimeoutSeconds);

    /// <summary>Parses the environment; on failure returns null and an explanation.</summary>
    public static InteropConfiguration? TryRead(Func<string, string?> variable, out string? error)
    {
        error = null;
        string? role = variable("ROLE");
        if (role is not ("client" or "server"))
        {
            error = "ROLE must be 'client' or 'server'";
            return null;
        }

        string? testCase = variable("TESTCASE");
        if (string.IsNullOrEmpty(testCase))
        {
            error = "TESTCASE is not set";
            return null;
        }

        List<Uri> requests = new();
        foreach (string part in (variable("REQUESTS") ?? string.Empty).Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out Uri? uri) || uri.Scheme != Uri.UriSchemeHttps)
            {
                error = $"REQUESTS entry '{part}' is not an https URL";
                return null;
            }

            requests.Add(uri);
        }

        int port = 443;
        string? portText = variable("PORT");
        if (!string.IsNullOrEmpty(portText) && (!int.TryParse(portText, NumberStyles.None, CultureInfo.InvariantCulture, out port) || port is < 1 or > 65535))
        {
            error = "PORT is not a port number";
            return null;
        }

        int timeoutSeconds = DefaultTimeoutSeconds;
        string? timeoutText = variable("INTEROP_TIMEOUT_SECONDS");
        if (!string.IsNullOrEmpty(timeoutText) && (!int.TryParse(timeoutText, NumberStyles.None, CultureInfo.InvariantCulture, out timeoutSeconds) || timeoutSeconds < 1))
        {
            error = "INTEROP_TIMEOUT_SECONDS must be a positive integer";
            return null;
        }

        string? alpn = variable("ALPN");
        if (!string.IsNullOrEmpty(alpn) && alpn is not (InteropTestCase.AlpnH3 or InteropTestCase.AlpnHq or InteropTestCase.AlpnSiduck))
        {
            error = $"ALPN must be '{InteropTestCase.AlpnH3}', '{InteropTestCase.AlpnHq}' or '{InteropTestCase.AlpnSiduck}'";
            return null;
        }

        string? host = variable("HOST");
        return new InteropConfiguration
        {
            IsClient = role == "client",
            TestCase = testCase,
            Requests = requests,
            WwwDirectory = variable("WWW"),
            DownloadDirectory = variable("DOWNLOADS"),
            CertificateDirectory = variable("CERTS"),
            KeyLogFile = variable("SSLKEYLOGFILE"),
            QlogDirectory = variable("QLOGDIR"),
            Alpn = string.IsNullOrEmpty(alpn) ? null : alpn,
            Host = string.IsNullOrEmpty(host) ? "::" : host,
            Port = port,
            Timeout = TimeSpan.FromSeconds(timeoutSeconds),
        };
    }
}
