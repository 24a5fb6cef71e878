using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>QUIC v2 (RFC 9369) and compatible version negotiation (RFC 9368) through the public options, on loopback.</summary>
public class ProtocolVersionApiTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static async Task<(QuicProtocolVersion Client, QuicProtocolVersion Server)> ConnectAsync(
        IList<QuicProtocolVersion>? clientVersions, IList<QuicProtocolVersion>? listenerVersions)
    {
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        listenerOptions.ProtocolVersions = listenerVersions;
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed, CancellationToken.None);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.ProtocolVersions = clientVersions;
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener, options);
        await using (client)
        await using (server)
        {
            // A stream round trip in the negotiated version.
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            Task echo = Task.Run(async () =>
            {
                await using QuicStream s = await server.AcceptInboundStreamAsync(timeout.Token);
                byte[] request = await ReadToEndAsync(s, timeout.Token);
                await s.WriteAsync(request, completeWrites: true, timeout.Token);
            });
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await stream.WriteAsync(new byte[50_000], completeWrites: true, timeout.Token);
            Assert.Equal(50_000, (await ReadToEndAsync(stream, timeout.Token)).Length);
            await echo;
            return (client.NegotiatedProtocolVersion, server.NegotiatedProtocolVersion);
        }
    }

    [Fact]
    public async Task DefaultsStayOnVersion1()
        => Assert.Equal((QuicProtocolVersion.Version1, QuicProtocolVersion.Version1), await ConnectAsync(null, null));

    [Fact]
    public async Task Version2ClientIsAnsweredInVersion2()
        => Assert.Equal((QuicProtocolVersion.Version2, QuicProtocolVersion.Version2), await ConnectAsync([QuicProtocolVersion.Version2], null));

    [Fact]
    public async Task ListenerPreferringVersion2UpgradesAVersion1Client()
        => Assert.Equal((QuicProtocolVersion.Version2, QuicProtocolVersion.Version2),
            await ConnectAsync([QuicProtocolVersion.Version1, QuicProtocolVersion.Version2], [QuicProtocolVersion.Version2, QuicProtocolVersion.Version1]));

    [Fact]
    public async Task ListenerPreferringVersion1DoesNotUpgrade()
        => Assert.Equal((QuicProtocolVersion.Version1, QuicProtocolVersion.Version1),
            await ConnectAsync([QuicProtocolVersion.Version1, QuicProtocolVersion.Version2], [QuicProtocolVersion.Version1, QuicProtocolVersion.Version2]));

    [Fact]
    public async Task Version2OnlyListenerRefusesVersion1OnlyClient()
    {
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        listenerOptions.ProtocolVersions = [QuicProtocolVersion.Version2];
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed, CancellationToken.None);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        // Version Negotiation lists only v2; a client that accepts only v1 gives up (RFC 9000 §6.2).
        var e = await Assert.ThrowsAsync<QuicException>(async () => await QuicConnection.ConnectAsync(ClientOptions(listener.LocalEndPoint), QuicProvider.Managed, timeout.Token));
        Assert.Equal(QuicError.VersionNegotiationError, e.QuicError);
    }

    public static TheoryData<QuicProtocolVersion[]> InvalidLists => new()
    {
        Array.Empty<QuicProtocolVersion>(),
        new[] { QuicProtocolVersion.Version1, QuicProtocolVersion.Version1 },
        new[] { (QuicProtocolVersion)0x0a0a0a0a },
    };

    [Theory]
    [MemberData(nameof(InvalidLists))]
    public void VersionListsAreValidated(QuicProtocolVersion[] versions)
    {
        QuicClientConnectionOptions client = ClientOptions(new IPEndPoint(IPAddress.Loopback, 4433));
        client.ProtocolVersions = versions;
        var e = Assert.Throws<ArgumentException>(() => client.Validate("options"));
        Assert.Equal("options", e.ParamName);
        Assert.Contains("ProtocolVersions", e.Message);
        Assert.Throws<ArgumentException>(() => QuicConnection.ConnectAsync(client, QuicProvider.Managed));

        QuicListenerOptions listener = ListenerOptions(IPAddress.Loopback);
        listener.ProtocolVersions = versions;
        Assert.Throws<ArgumentException>(() => QuicListener.ListenAsync(listener, QuicProvider.Managed));
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task VersionMembersOnEachProvider(string provider)
    {
        QuicProvider kind = Require(provider);
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        listenerOptions.ProtocolVersions = [QuicProtocolVersion.Version1];
        if (kind == QuicProvider.MsQuic)
        {
            Assert.Throws<PlatformNotSupportedException>(() => QuicListener.ListenAsync(listenerOptions, kind));
            QuicClientConnectionOptions client = ClientOptions(new IPEndPoint(IPAddress.Loopback, 4433));
            client.ProtocolVersions = [QuicProtocolVersion.Version1];
            Assert.Throws<PlatformNotSupportedException>(() => QuicConnection.ConnectAsync(client, kind));
        }
        await WithConnectedPairAsync(provider, (client, server, _) =>
        {
            if (kind == QuicProvider.MsQuic) Assert.Throws<NotSupportedException>(() => client.NegotiatedProtocolVersion);
            else Assert.Equal(QuicProtocolVersion.Version1, server.NegotiatedProtocolVersion);
            return Task.CompletedTask;
        });
    }
}
