namespace QuicManaged.Interop.Runner;

/// <summary>
/// One quic-interop-runner test case: the ALPN it runs under and whether this endpoint can run it in each role.
/// A case marked unsupported exits with 127, which the runner reports as "unsupported" rather than failed.
/// </summary>
internal sealed record InteropTestCase(string Name, string Alpn, bool ClientSupported, bool ServerSupported, string Note)
{
    public const string AlpnH3 = "h3";
    public const string AlpnHq = "hq-interop";

    /// <summary>siduck (draft-pardue-quic-siduck): DATAGRAM "quack" answered with "quack-ack"; msquic's quicinterop datagram test.</summary>
    public const string AlpnSiduck = "siduck";

    // The runner uses h3 for "http3" and hq-interop for everything else.
    // ClientSupported/ServerSupported = false marks cases that need transport features with no public API yet.
    private static readonly InteropTestCase[] s_cases =
    [
        new("handshake", AlpnHq, true, true, "one request, one connection"),
        new("transfer", AlpnHq, true, true, "several files over one connection, flow control"),
        new("multiplexing", AlpnHq, true, true, "many concurrent streams over one connection"),
        new("http3", AlpnH3, true, true, "HTTP/3 with QPACK (static table only)"),
        new("handshakeloss", AlpnHq, true, true, "loss recovery is the transport's; the endpoint just makes the requests"),
        new("transferloss", AlpnHq, true, true, "loss recovery is the transport's"),
        new("retry", AlpnHq, true, true, "server: QuicListenerOptions.RequireRetry sends a Retry to every new client; client: following a Retry is the transport's"),
        new("chacha20", AlpnHq, true, true, "client offers only TLS_CHACHA20_POLY1305_SHA256 (CipherSuitesPolicy)"),
        new("resumption", AlpnHq, true, true, "client: first URL on one connection, the rest on a second one resuming with its session ticket (QuicSessionTicketStore)"),
        new("zerortt", AlpnHq, true, true, "client: the second connection sends its requests as 0-RTT (EnableEarlyData); server: accepts 0-RTT"),
        new("keyupdate", AlpnHq, true, true, "client: QuicConnection.UpdateKeysAsync once, as soon as RFC 9001 §6 allows, while downloading; server: answering is the transport's"),
        new("v2", AlpnHq, true, true, "client: first Initial in v1 offering v2 (ProtocolVersions); server: answers such clients in v2 (compatible version negotiation, RFC 9368)"),
        new("connectionmigration", AlpnHq, true, true, "client: moves to the server's preferred_address after the handshake (RFC 9000 §9.6, automatic); server: advertises PREFERRED_ADDRESS, or HOST:PORT+2 (QuicListenerOptions.PreferredAddress)"),
        new("rebind", AlpnHq, true, true, "NAT rebinding is passive; handled (or not) by the transport"),
        new("rebind-port", AlpnHq, true, true, "as rebind"),
        new("rebind-addr", AlpnHq, true, true, "as rebind"),
        new("activemigration", AlpnHq, true, true, "not a runner case: client: QuicConnection.MigrateAsync to a new socket once during the download; server: passive, as rebind"),
    ];

    public static IReadOnlyList<InteropTestCase> All => s_cases;

    public static InteropTestCase? Find(string? name)
    {
        foreach (InteropTestCase testCase in s_cases)
        {
            if (string.Equals(testCase.Name, name, StringComparison.Ordinal))
            {
                return testCase;
            }
        }

        return null;
    }

    public bool IsSupported(bool isClient) => isClient ? ClientSupported : ServerSupported;
}
