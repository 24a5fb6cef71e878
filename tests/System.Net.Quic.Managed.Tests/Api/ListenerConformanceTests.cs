using System.Diagnostics;
using System.Net.Quic.Managed.Tests.Tls;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Listener behaviour on both providers (msquic is the reference): a handshake the listener cannot complete reaches
/// AcceptConnectionAsync as its exception and fails the client promptly; the backlog is enforced; forged Initials do
/// not jam the listener.
/// </summary>
public class ListenerConformanceTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static CancellationToken Timeout(int seconds = 20) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    private static QuicListenerOptions WithCallback(Func<QuicServerConnectionOptions, ValueTask<QuicServerConnectionOptions>> callback)
    {
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.ConnectionOptionsCallback = (_, _, _) => callback(ServerOptions());
        return options;
    }

    /// <summary>Connects once; returns what ConnectAsync threw (null if it succeeded) and how long it took.</summary>
    private static async Task<(Exception? Error, TimeSpan Elapsed)> TryConnectAsync(QuicProvider provider, QuicClientConnectionOptions options)
    {
        var watch = Stopwatch.StartNew();
        try
        {
            QuicConnection connection = await ConnectAsync(provider, options, Timeout());
            await connection.DisposeAsync();
            return (null, watch.Elapsed);
        }
        catch (Exception ex)
        {
            return (ex, watch.Elapsed);
        }
    }

    private static async Task<Exception> AcceptFailureAsync(QuicListener listener)
    {
        try
        {
            QuicConnection unexpected = await listener.AcceptConnectionAsync(Timeout());
            await unexpected.DisposeAsync();
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            return ex;
        }
        throw new Xunit.Sdk.XunitException("AcceptConnectionAsync returned a connection instead of the handshake's failure.");
    }

    /// <summary>
    /// A handshake the listener cannot complete: listens with <paramref name="listenerOptions"/>, connects one client
    /// (<paramref name="configureClient"/> may change its options), and returns what accept threw, what ConnectAsync
    /// threw (null if it succeeded) and how long the connect took.
    /// </summary>
    private static async Task<(Exception Accept, Exception? Connect, TimeSpan Elapsed)> FailedHandshakeAsync(
        QuicProvider kind, QuicListenerOptions listenerOptions, Action<QuicClientConnectionOptions>? configureClient = null)
    {
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, kind, CancellationToken.None);
        Task<Exception> accept = AcceptFailureAsync(listener);
        QuicClientConnectionOptions client = ClientOptions(listener.LocalEndPoint);
        configureClient?.Invoke(client);
        (Exception? error, TimeSpan elapsed) = await TryConnectAsync(kind, client);
        return (await accept, error, elapsed);
    }

    /// <summary>Listener options whose callback returns the usual server options after <paramref name="configure"/>.</summary>
    private static QuicListenerOptions Configured(Action<QuicServerConnectionOptions> configure)
        => WithCallback(options =>
        {
            configure(options);
            return ValueTask.FromResult(options);
        });

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task OptionsCallbackThrowing_AcceptThrowsCallbackError_ClientFailsFast(string provider)
    {
        QuicProvider kind = Require(provider);
        (Exception accept, Exception? error, TimeSpan elapsed) = await FailedHandshakeAsync(kind,
            WithCallback(_ => throw new InvalidOperationException("no options for you")));

        var failure = Assert.IsType<QuicException>(accept);
        Assert.Equal(QuicError.CallbackError, failure.QuicError);
        Assert.IsType<InvalidOperationException>(failure.GetBaseException());
        Assert.IsType<AuthenticationException>(error);
        Assert.True(elapsed < TimeSpan.FromSeconds(5), $"the client learned of the refusal after {elapsed}");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task OptionsCallbackFaulted_AcceptThrowsCallbackError(string provider)
    {
        QuicProvider kind = Require(provider);
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind,
            WithCallback(_ => ValueTask.FromException<QuicServerConnectionOptions>(new InvalidOperationException("faulted"))));

        var failure = Assert.IsType<QuicException>(accept);
        Assert.Equal(QuicError.CallbackError, failure.QuicError);
        Assert.IsType<AuthenticationException>(error);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task OptionsCallbackReturningInvalidOptions_AcceptThrowsArgumentException(string provider)
    {
        QuicProvider kind = Require(provider);
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind, Configured(options => options.IdleTimeout = TimeSpan.FromSeconds(-5)));

        Assert.IsAssignableFrom<ArgumentException>(accept);
        Assert.NotNull(error);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task NoCommonAlpn_BothSidesSeeAuthenticationException(string provider)
    {
        QuicProvider kind = Require(provider);
        // The listener takes "test" but the connection's options narrow ALPN to something the client does not offer.
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind,
            Configured(options => options.ServerAuthenticationOptions.ApplicationProtocols = new List<SslApplicationProtocol> { new("other") }));

        Assert.IsType<AuthenticationException>(accept);
        Assert.IsType<AuthenticationException>(error);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ClientRejectingServerCertificate_AcceptThrowsAuthenticationException(string provider)
    {
        QuicProvider kind = Require(provider);
        // The test root is not trusted: the client rejects the server's certificate.
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind, ListenerOptions(IPAddress.Loopback),
            client => client.ClientAuthenticationOptions.CertificateChainPolicy = null);

        Assert.IsType<AuthenticationException>(error);
        Assert.IsType<AuthenticationException>(accept);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task CertificateSelectionCallbackReturningNull_AcceptThrowsArgumentException(string provider)
    {
        QuicProvider kind = Require(provider);
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind, Configured(options =>
        {
            options.ServerAuthenticationOptions.ServerCertificate = null;
            options.ServerAuthenticationOptions.ServerCertificateSelectionCallback = (_, _) => null!;
        }));

        Assert.IsAssignableFrom<ArgumentException>(accept);
        Assert.NotNull(error);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ServerRejectingClientCertificate_AcceptThrowsAuthenticationException(string provider)
    {
        QuicProvider kind = Require(provider);
        using X509Certificate2 clientCertificate = TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256, "client");
        (Exception accept, Exception? error, _) = await FailedHandshakeAsync(kind, Configured(options =>
        {
            options.ServerAuthenticationOptions.ClientCertificateRequired = true;
            options.ServerAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => false;
        }), client => client.ClientAuthenticationOptions.ClientCertificates = new X509CertificateCollection { clientCertificate });

        Assert.IsType<AuthenticationException>(accept);
        // TLS 1.3: the client may finish before the server rejects its certificate; it then learns of it later.
        if (error is not null) Assert.True(error is AuthenticationException or QuicException, error.ToString());
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task RequiredClientCertificateMissing_ServerCallbackIsAskedAndDecides(string provider)
    {
        QuicProvider kind = Require(provider);
        var asked = new TaskCompletionSource<SslPolicyErrors>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using QuicListener listener = await QuicListener.ListenAsync(WithCallback(options =>
        {
            options.ServerAuthenticationOptions.ClientCertificateRequired = true;
            options.ServerAuthenticationOptions.RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
            {
                asked.TrySetResult(errors);
                return certificate is null; // accept the anonymous client
            };
            return ValueTask.FromResult(options);
        }), kind, CancellationToken.None);
        var (client, server) = await ConnectPairAsync(kind, listener);
        await using (client)
        await using (server)
        {
            SslPolicyErrors errors = await asked.Task.WaitAsync(TimeSpan.FromSeconds(10));
            Assert.True(errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable), errors.ToString());
            Assert.Null(server.RemoteCertificate);
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ThrowingClientValidationCallback_ConnectThrowsItsException(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind);
        QuicClientConnectionOptions client = ClientOptions(listener.LocalEndPoint);
        client.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => throw new InvalidTimeZoneException("from the callback");
        (Exception? error, TimeSpan elapsed) = await TryConnectAsync(kind, client);

        // msquic: QuicException(CallbackError) around the callback's exception.
        var failure = Assert.IsType<QuicException>(error);
        Assert.Equal(QuicError.CallbackError, failure.QuicError);
        Assert.IsType<InvalidTimeZoneException>(failure.GetBaseException());
        Assert.True(elapsed < TimeSpan.FromSeconds(5), $"ConnectAsync failed after {elapsed}");
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task BacklogFull_FurtherClientsAreRefused(string provider)
    {
        QuicProvider kind = Require(provider);
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.ListenBacklog = 2;
        await using QuicListener listener = await QuicListener.ListenAsync(options, kind, CancellationToken.None);
        var connected = new List<QuicConnection>();
        try
        {
            // Nobody accepts: two connections fill the backlog, the third is refused.
            for (int i = 0; i < 2; i++) connected.Add(await ConnectAsync(kind, ClientOptions(listener.LocalEndPoint), Timeout()));
            (Exception? error, TimeSpan elapsed) = await TryConnectAsync(kind, ClientOptions(listener.LocalEndPoint));
            var refused = Assert.IsType<QuicException>(error);
            Assert.Equal(QuicError.ConnectionRefused, refused.QuicError);
            Assert.True(elapsed < TimeSpan.FromSeconds(5), $"refused after {elapsed}");

            // Accepting one frees a place.
            await using QuicConnection first = await listener.AcceptConnectionAsync(Timeout());
            connected.Add(await ConnectAsync(kind, ClientOptions(listener.LocalEndPoint), Timeout()));
        }
        finally
        {
            foreach (QuicConnection c in connected) await c.DisposeAsync();
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ForgedInitialFlood_RealClientIsServedRightAfter(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind);
        using (var attacker = new UdpClient(AddressFamily.InterNetwork))
        {
            var random = new Random(5);
            byte[] datagram = new byte[1200];
            for (int i = 0; i < 5000; i++)
            {
                random.NextBytes(datagram);
                datagram[0] = 0xC3;
                datagram[1] = 0; datagram[2] = 0; datagram[3] = 0; datagram[4] = 1;
                datagram[5] = 8; datagram[14] = 8; datagram[23] = 0; datagram[24] = 0x44; datagram[25] = 0x00;
                attacker.Send(datagram, datagram.Length, listener.LocalEndPoint);
                if (i % 100 == 99) await Task.Delay(1); // let the listener's socket buffer drain a little
            }
        }
        for (int i = 0; i < 3; i++)
        {
            var (client, server) = await ConnectPairAsync(kind, listener);
            await using (client)
            await using (server)
            {
                Assert.Equal("test", server.NegotiatedApplicationProtocol.ToString());
            }
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task TwoListenersOnOnePort_RouteByAlpn(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener first = await ListenAsync(kind, alpn: "first");
        QuicListenerOptions secondOptions = ListenerOptions(IPAddress.Loopback, alpn: "second");
        secondOptions.ListenEndPoint = first.LocalEndPoint;
        await using QuicListener second = await QuicListener.ListenAsync(secondOptions, kind, CancellationToken.None);
        Assert.Equal(first.LocalEndPoint, second.LocalEndPoint);

        foreach ((QuicListener listener, string alpn) in new[] { (second, "second"), (first, "first") })
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            Task<QuicConnection> connect = ConnectAsync(kind, ClientOptions(first.LocalEndPoint, alpn), timeout.Token);
            await using QuicConnection server = await listener.AcceptConnectionAsync(timeout.Token);
            await using QuicConnection client = await connect;
            Assert.Equal(alpn, server.NegotiatedApplicationProtocol.ToString());
            Assert.Equal(alpn, client.NegotiatedApplicationProtocol.ToString());
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task SecondListenerWithSameAlpnOnOnePort_ThrowsAlpnInUse(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener first = await ListenAsync(kind);
        QuicListenerOptions again = ListenerOptions(IPAddress.Loopback);
        again.ListenEndPoint = first.LocalEndPoint;
        var error = await Assert.ThrowsAsync<QuicException>(async () => await QuicListener.ListenAsync(again, kind, CancellationToken.None));
        Assert.Equal(QuicError.AlpnInUse, error.QuicError);
    }

    // ---- Checked against the contract: what an independent System.Net.Quic suite expects, on both providers. ----

    /// <summary>
    /// A client offering none of the listener's ALPNs is refused before any connection exists: the client fails with an
    /// AuthenticationException and the listener's accept loop never hears of it (it goes on to serve the next client).
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ClientWithAnUnknownAlpn_DoesNotDisturbAccept(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind);
        ValueTask<QuicConnection> accept = listener.AcceptConnectionAsync(Timeout());
        await Assert.ThrowsAsync<AuthenticationException>(async () => await ConnectAsync(kind, ClientOptions(listener.LocalEndPoint, alpn: "unknown"), Timeout()));
        Assert.False(accept.IsCompleted, "AcceptConnectionAsync completed for a client whose ALPN the listener does not take");
        await using QuicConnection client = await ConnectAsync(kind, ClientOptions(listener.LocalEndPoint), Timeout());
        await using QuicConnection server = await accept;
        Assert.Equal(client.LocalEndPoint.Port, server.RemoteEndPoint.Port);
    }

    /// <summary>
    /// ServerCertificateSelectionCallback returning null: the server declines with the TLS alert user_canceled, which the
    /// client reports as an AuthenticationException naming it (and nothing of the server's configuration).
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task CertificateSelectionCallbackReturningNull_ClientSeesUserCanceled(string provider)
    {
        QuicProvider kind = Require(provider);
        (_, Exception? error, _) = await FailedHandshakeAsync(kind, Configured(options =>
        {
            options.ServerAuthenticationOptions.ServerCertificate = null;
            options.ServerAuthenticationOptions.ServerCertificateSelectionCallback = (_, _) => null!;
        }));

        AuthenticationException e = Assert.IsType<AuthenticationException>(error);
        Assert.Contains("UserCanceled", e.Message);
    }

    /// <summary>
    /// The listener is disposed while a client's handshake waits for the ConnectionOptionsCallback (which honours its
    /// token): the server declines the handshake with user_canceled and the client fails with an AuthenticationException,
    /// not a socket error.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task ListenerDisposedMidHandshake_ClientSeesAuthenticationException(string provider)
    {
        QuicProvider kind = Require(provider);
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.ConnectionOptionsCallback = async (_, _, token) =>
        {
            entered.TrySetResult();
            await Task.Delay(System.Threading.Timeout.Infinite, token);
            return ServerOptions();
        };
        QuicListener listener = await QuicListener.ListenAsync(options, kind, CancellationToken.None);
        Task<QuicConnection> connect = ConnectAsync(kind, ClientOptions(listener.LocalEndPoint), Timeout());
        await entered.Task.WaitAsync(Timeout());
        await listener.DisposeAsync();
        await Assert.ThrowsAsync<AuthenticationException>(async () => await connect);
    }
}
