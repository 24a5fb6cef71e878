using System.Diagnostics;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Xunit.Abstractions;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Errors and option validation as System.Net.Quic on msquic reports them (exception type, QuicError, codes, message
/// shape), for each provider: cipher suite policies, idle close codes, SNI for IP targets, ALPN-less server options,
/// port 0 and a port where nothing listens. msquic is the oracle: each expectation was observed on it.
/// </summary>
public class ErrorConformanceTests(ITestOutputHelper output)
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static CancellationToken Timeout(int seconds = 20) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    private static CipherSuitesPolicy Policy(params TlsCipherSuite[] suites) => new(suites);

    private static async Task<(TlsCipherSuite Client, TlsCipherSuite Server)> NegotiateAsync(QuicProvider kind, CipherSuitesPolicy? client, CipherSuitesPolicy? server)
    {
        await using QuicListener listener = await ListenAsync(kind, configure: o => o.ServerAuthenticationOptions.CipherSuitesPolicy = server);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.ClientAuthenticationOptions.CipherSuitesPolicy = client;
        var (c, s) = await ConnectPairAsync(kind, listener, options);
        await using (c)
        await using (s)
        {
            return (c.NegotiatedCipherSuite, s.NegotiatedCipherSuite);
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ClientChaCha20OnlyPolicyNegotiatesChaCha20(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        var (client, server) = await NegotiateAsync(Require(provider), Policy(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256), null);
        Assert.Equal(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, client);
        Assert.Equal(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, server);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ServerPolicyRestrictsTheSuite(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        QuicProvider kind = Require(provider);
        var (client, server) = await NegotiateAsync(kind, null, Policy(TlsCipherSuite.TLS_AES_256_GCM_SHA384));
        Assert.Equal(TlsCipherSuite.TLS_AES_256_GCM_SHA384, client);
        Assert.Equal(TlsCipherSuite.TLS_AES_256_GCM_SHA384, server);
        (client, server) = await NegotiateAsync(kind, null, Policy(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256));
        Assert.Equal(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, client);
        Assert.Equal(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, server);
    }

    /// <summary>Across providers: each side's policy is honoured by the other provider's peer (msquic is the oracle).</summary>
    [SkippableTheory]
    [InlineData("managed", "msquic")]
    [InlineData("msquic", "managed")]
    public async Task PoliciesHoldAcrossProviders(string serverProvider, string clientProvider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        QuicProvider server = Require(serverProvider), client = Require(clientProvider);
        foreach (var (clientPolicy, serverPolicy, expected) in new (TlsCipherSuite[]?, TlsCipherSuite[]?, TlsCipherSuite)[]
        {
            (new[] { TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 }, null, TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256),
            (null, new[] { TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 }, TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256),
            (new[] { TlsCipherSuite.TLS_AES_256_GCM_SHA384 }, null, TlsCipherSuite.TLS_AES_256_GCM_SHA384),
            (null, new[] { TlsCipherSuite.TLS_AES_256_GCM_SHA384 }, TlsCipherSuite.TLS_AES_256_GCM_SHA384),
        })
        {
            await using QuicListener listener = await ListenAsync(server, configure: o => o.ServerAuthenticationOptions.CipherSuitesPolicy = serverPolicy is null ? null : new(serverPolicy));
            QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
            options.ClientAuthenticationOptions.CipherSuitesPolicy = clientPolicy is null ? null : new(clientPolicy);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            Task<QuicConnection> connect = ConnectAsync(client, options, timeout.Token);
            await using QuicConnection s = await listener.AcceptConnectionAsync(timeout.Token);
            await using QuicConnection c = await connect;
            Assert.Equal(expected, c.NegotiatedCipherSuite);
            Assert.Equal(expected, s.NegotiatedCipherSuite);
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task DisjointPoliciesFailTheHandshake(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind, configure: o => o.ServerAuthenticationOptions.CipherSuitesPolicy = Policy(TlsCipherSuite.TLS_AES_256_GCM_SHA384));
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.ClientAuthenticationOptions.CipherSuitesPolicy = Policy(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256);
        options.HandshakeTimeout = TimeSpan.FromSeconds(5);
        var watch = Stopwatch.StartNew();
        Exception e = await Assert.ThrowsAnyAsync<Exception>(() => ConnectAsync(kind, options, Timeout()));
        output.WriteLine($"{e.GetType().Name} after {watch.ElapsedMilliseconds} ms: {e.Message}");
        // msquic: QuicException(InternalError, "... QUIC_STATUS_HANDSHAKE_FAILURE"), at once (no common suite).
        QuicException quic = Assert.IsType<QuicException>(e);
        Assert.Equal(QuicError.InternalError, quic.QuicError);
        Assert.Contains("HANDSHAKE_FAILURE", quic.Message);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(4), $"took {watch.Elapsed}");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ClientPolicyWithoutAQuicSuiteIsAnArgumentException(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        QuicProvider kind = Require(provider);
        QuicClientConnectionOptions options = ClientOptions(new IPEndPoint(IPAddress.Loopback, 443));
        options.ClientAuthenticationOptions.CipherSuitesPolicy = Policy(TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256);
        ArgumentException e = await Assert.ThrowsAsync<ArgumentException>(() => ConnectAsync(kind, options, Timeout()));
        Assert.Equal("CipherSuitesPolicy", e.ParamName);
        Assert.StartsWith("CipherSuitePolicy must specify at least one cipher supported by QUIC.", e.Message);
    }

    /// <summary>
    /// Server options the listener's callback returns that msquic rejects with ArgumentException: the client is refused at
    /// once with a TLS user_canceled alert (AuthenticationException) and AcceptConnectionAsync throws the ArgumentException.
    /// </summary>
    private async Task InvalidServerOptionsRefuseTheConnectionAsync(QuicProvider kind, Action<QuicServerConnectionOptions> configure, string expectedMessage)
    {
        await using QuicListener listener = await ListenAsync(kind, configure: configure);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.HandshakeTimeout = TimeSpan.FromSeconds(5);
        Task<QuicConnection> accept = listener.AcceptConnectionAsync(Timeout(10)).AsTask();
        var watch = Stopwatch.StartNew();
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(kind, options, Timeout(10)));
        output.WriteLine($"client after {watch.ElapsedMilliseconds} ms: {e.Message}");
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(4), $"took {watch.Elapsed}");
        ArgumentException acceptError = await Assert.ThrowsAsync<ArgumentException>(() => accept);
        output.WriteLine($"accept: {acceptError.Message}");
        Assert.StartsWith(expectedMessage, acceptError.Message);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ServerPolicyWithoutAQuicSuiteRefusesTheConnection(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        return InvalidServerOptionsRefuseTheConnectionAsync(Require(provider),
            o => o.ServerAuthenticationOptions.CipherSuitesPolicy = Policy(TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
            "CipherSuitePolicy must specify at least one cipher supported by QUIC.");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ServerOptionsWithoutApplicationProtocolsRefuseTheConnection(string provider)
        => InvalidServerOptionsRefuseTheConnectionAsync(Require(provider), o => o.ServerAuthenticationOptions.ApplicationProtocols = null,
            "'SslApplicationProtocol' must be specified and contain at least one item to establish the connection.");

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public Task ServerOptionsWithAnEmptyApplicationProtocolListRefuseTheConnection(string provider)
        => InvalidServerOptionsRefuseTheConnectionAsync(Require(provider), o => o.ServerAuthenticationOptions.ApplicationProtocols = new(),
            "'SslApplicationProtocol' must be specified and contain at least one item to establish the connection.");

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task IdleCloseCarriesTransportErrorCodeOne(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind, configure: o => o.IdleTimeout = TimeSpan.FromSeconds(1));
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.IdleTimeout = TimeSpan.FromSeconds(1);
        var (client, server) = await ConnectPairAsync(kind, listener, options);
        await using (client)
        await using (server)
        {
            Task<QuicStream> serverSide = server.AcceptInboundStreamAsync(Timeout(10)).AsTask();
            QuicException e = await Assert.ThrowsAsync<QuicException>(async () => await client.AcceptInboundStreamAsync(Timeout(10)));
            Assert.Equal(QuicError.ConnectionIdle, e.QuicError);
            Assert.Equal(1, e.TransportErrorCode);
            Assert.Null(e.ApplicationErrorCode);
            Assert.Equal("The connection timed out from inactivity.", e.Message);
            QuicException onServer = await Assert.ThrowsAsync<QuicException>(() => serverSide);
            Assert.Equal(QuicError.ConnectionIdle, onServer.QuicError);
            Assert.Equal(1, onServer.TransportErrorCode);
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task IpAddressTargetHostGivesTheServerAnEmptyName(string provider)
    {
        QuicProvider kind = Require(provider);
        string? selectedFor = "not called";
        await using QuicListener listener = await ListenAsync(kind, configure: o =>
        {
            o.ServerAuthenticationOptions.ServerCertificate = null;
            o.ServerAuthenticationOptions.ServerCertificateSelectionCallback = (_, name) =>
            {
                selectedFor = name;
                return ServerCertificate;
            };
        });
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint, trustTestRoot: false);
        options.ClientAuthenticationOptions.TargetHost = "127.0.0.1";
        options.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        var (client, server) = await ConnectPairAsync(kind, listener, options);
        await using (client)
        await using (server)
        {
            Assert.Equal("", selectedFor); // no SNI for an IP address (RFC 6066 §3): "", not null
            Assert.Equal("", server.TargetHostName);
            Assert.Equal("127.0.0.1", client.TargetHostName);
        }
    }

    public static TheoryData<string, string> PortZeroCases => new()
    {
        { "managed", "ipv4" }, { "managed", "ipv6" }, { "managed", "dns" },
        { "msquic", "ipv4" }, { "msquic", "ipv6" }, { "msquic", "dns" },
    };

    [SkippableTheory]
    [MemberData(nameof(PortZeroCases))]
    public async Task RemotePortZeroFailsAtOnce(string provider, string kindOfEndPoint)
    {
        QuicProvider kind = Require(provider);
        QuicClientConnectionOptions options = ClientOptions(new IPEndPoint(IPAddress.Loopback, 0));
        options.RemoteEndPoint = kindOfEndPoint switch
        {
            "ipv6" => new IPEndPoint(IPAddress.IPv6Loopback, 0),
            "dns" => new DnsEndPoint("localhost", 0),
            _ => new IPEndPoint(IPAddress.Loopback, 0),
        };
        options.HandshakeTimeout = TimeSpan.FromSeconds(5);
        var watch = Stopwatch.StartNew();
        QuicException e = await Assert.ThrowsAsync<QuicException>(() => ConnectAsync(kind, options, Timeout()));
        output.WriteLine($"{e.QuicError} after {watch.ElapsedMilliseconds} ms: {e.Message}");
        // msquic: ConnectionStart fails with QUIC_STATUS_INVALID_PARAMETER, surfaced as an internal error.
        Assert.Equal(QuicError.InternalError, e.QuicError);
        Assert.StartsWith("An internal error has occurred. ConnectionStart failed: QUIC_STATUS_INVALID_PARAMETER", e.Message);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(2), $"took {watch.Elapsed}");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ClosedPortThrowsSocketExceptionHostUnreachable(string provider)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "the ICMP port unreachable reaches a connected UDP socket on Linux");
        QuicProvider kind = Require(provider);
        foreach (IPAddress address in new[] { IPAddress.Loopback, IPAddress.IPv6Loopback })
        {
            int port;
            using (var probe = new Socket(address.AddressFamily, SocketType.Dgram, ProtocolType.Udp))
            {
                probe.Bind(new IPEndPoint(address, 0));
                port = ((IPEndPoint)probe.LocalEndPoint!).Port;
            }
            QuicClientConnectionOptions options = ClientOptions(new IPEndPoint(address, port));
            options.HandshakeTimeout = TimeSpan.FromSeconds(5);
            var watch = Stopwatch.StartNew();
            SocketException e = await Assert.ThrowsAsync<SocketException>(() => ConnectAsync(kind, options, Timeout()));
            output.WriteLine($"{address}: {e.SocketErrorCode} ({e.NativeErrorCode}) after {watch.ElapsedMilliseconds} ms: {e.Message}");
            Assert.Equal(SocketError.HostUnreachable, e.SocketErrorCode);
            Assert.Equal(new SocketException((int)SocketError.HostUnreachable).Message, e.Message);
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(2), $"took {watch.Elapsed}");
        }
    }
}
