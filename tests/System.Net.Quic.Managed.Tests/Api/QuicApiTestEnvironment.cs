using System.Net.Quic.Managed.Tests.Tls;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>Certificates, options and loopback pairs for the public API tests, for either provider.</summary>
internal static class QuicApiTestEnvironment
{
    public const string MsQuicSkipReason = "libmsquic not loadable on this machine";

    private static readonly Lazy<X509Certificate2> s_certificate = new(() => TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256, "localhost"));

    /// <summary>A leaf for "localhost" issued by the in-process test root (not trusted by the system store).</summary>
    public static X509Certificate2 ServerCertificate => s_certificate.Value;

    public static QuicProvider Parse(string provider) => provider == "msquic" ? QuicProvider.MsQuic : QuicProvider.Managed;

    /// <summary>Skips a test for a provider that cannot run here (the msquic provider without libmsquic).</summary>
    public static QuicProvider Require(string provider)
    {
        QuicProvider kind = Parse(provider);
        Skip.IfNot(QuicProviderSelection.IsSupported(kind), MsQuicSkipReason);
        return kind;
    }

    public static QuicServerConnectionOptions ServerOptions(string alpn = "test") => new()
    {
        DefaultStreamErrorCode = 0x0A,
        DefaultCloseErrorCode = 0x0B,
        MaxInboundBidirectionalStreams = 200,
        MaxInboundUnidirectionalStreams = 200,
        ServerAuthenticationOptions = new SslServerAuthenticationOptions
        {
            ApplicationProtocols = new List<SslApplicationProtocol> { new(alpn) },
            ServerCertificate = ServerCertificate,
        },
    };

    public static QuicListenerOptions ListenerOptions(IPAddress address, string alpn = "test", Action<QuicServerConnectionOptions>? configure = null) => new()
    {
        ListenEndPoint = new IPEndPoint(address, 0),
        ApplicationProtocols = new List<SslApplicationProtocol> { new(alpn) },
        ConnectionOptionsCallback = (_, _, _) =>
        {
            QuicServerConnectionOptions options = ServerOptions(alpn);
            configure?.Invoke(options);
            return ValueTask.FromResult(options);
        },
    };

    public static Task<QuicListener> ListenAsync(QuicProvider provider, IPAddress? address = null, string alpn = "test", Action<QuicServerConnectionOptions>? configure = null)
        => QuicListener.ListenAsync(ListenerOptions(address ?? IPAddress.Loopback, alpn, configure), provider, CancellationToken.None).AsTask();

    /// <summary>Client options trusting the test root (through the chain policy, no callback).</summary>
    public static QuicClientConnectionOptions ClientOptions(IPEndPoint remote, string alpn = "test", bool trustTestRoot = true) => new()
    {
        RemoteEndPoint = remote,
        DefaultStreamErrorCode = 0x0C,
        DefaultCloseErrorCode = 0x0D,
        MaxInboundBidirectionalStreams = 100,
        MaxInboundUnidirectionalStreams = 100,
        HandshakeTimeout = TimeSpan.FromSeconds(10),
        ClientAuthenticationOptions = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = new List<SslApplicationProtocol> { new(alpn) },
            CertificateChainPolicy = trustTestRoot ? TlsTestCertificates.TrustRoot(TlsTestCertificates.Root) : null,
        },
    };

    public static Task<QuicConnection> ConnectAsync(QuicProvider provider, QuicClientConnectionOptions options, CancellationToken cancellationToken = default)
        => QuicConnection.ConnectAsync(options, provider, cancellationToken).AsTask();

    /// <summary>Connects a client to <paramref name="listener"/> and accepts it: both ends, handshake complete.</summary>
    public static async Task<(QuicConnection Client, QuicConnection Server)> ConnectPairAsync(QuicProvider provider, QuicListener listener, QuicClientConnectionOptions? options = null)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        Task<QuicConnection> connect = ConnectAsync(provider, options ?? ClientOptions(listener.LocalEndPoint), timeout.Token);
        QuicConnection server = await listener.AcceptConnectionAsync(timeout.Token);
        QuicConnection client = await connect;
        return (client, server);
    }

    /// <summary>
    /// The setup most two-provider tests share: skip when the provider is unavailable, listen, connect a client and accept
    /// it, run <paramref name="body"/> with a 20 s cancellation token, then dispose both connections and the listener.
    /// </summary>
    public static async Task WithConnectedPairAsync(string provider, Func<QuicConnection, QuicConnection, CancellationToken, Task> body,
        Action<QuicServerConnectionOptions>? configureServer = null, Action<QuicClientConnectionOptions>? configureClient = null)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind, configure: configureServer);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        configureClient?.Invoke(options);
        var (client, server) = await ConnectPairAsync(kind, listener, options);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            await body(client, server, timeout.Token);
        }
    }

    /// <summary>Reads until the peer's FIN.</summary>
    public static async Task<byte[]> ReadToEndAsync(Stream stream, CancellationToken cancellationToken = default)
    {
        var output = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = await stream.ReadAsync(buffer, cancellationToken)) > 0) output.Write(buffer, 0, n);
        return output.ToArray();
    }
}
