using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>Options are validated synchronously, before any async work, with the exceptions System.Net.Quic throws.</summary>
public class OptionsValidationTests
{
    private static QuicClientConnectionOptions ValidClient() => new()
    {
        RemoteEndPoint = new IPEndPoint(IPAddress.Loopback, 4433),
        DefaultStreamErrorCode = 1,
        DefaultCloseErrorCode = 2,
        ClientAuthenticationOptions = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
        },
    };

    [Fact]
    public void DefaultsMatchSystemNetQuic()
    {
        var client = new QuicClientConnectionOptions();
        var server = new QuicServerConnectionOptions();
        Assert.Equal(0, client.MaxInboundBidirectionalStreams);
        Assert.Equal(0, client.MaxInboundUnidirectionalStreams);
        Assert.Equal(100, server.MaxInboundBidirectionalStreams);
        Assert.Equal(10, server.MaxInboundUnidirectionalStreams);
        Assert.Equal(-1, client.DefaultStreamErrorCode);
        Assert.Equal(-1, client.DefaultCloseErrorCode);
        Assert.Equal(TimeSpan.FromSeconds(10), client.HandshakeTimeout);
        Assert.Equal(Timeout.InfiniteTimeSpan, client.KeepAliveInterval);
        Assert.Equal(16 * 1024 * 1024, client.InitialReceiveWindowSizes.Connection);
        Assert.Equal(64 * 1024, client.InitialReceiveWindowSizes.UnidirectionalStream);

        var ours = new System.Net.Quic.QuicServerConnectionOptions();
        Assert.Equal(ours.MaxInboundBidirectionalStreams, server.MaxInboundBidirectionalStreams);
        Assert.Equal(ours.HandshakeTimeout, server.HandshakeTimeout);
        Assert.Equal(ours.InitialReceiveWindowSizes.Connection, server.InitialReceiveWindowSizes.Connection);
    }

    [Fact]
    public void ValidClientOptionsPass()
    {
        ValidClient().Validate("options");
        QuicClientConnectionOptions dns = ValidClient();
        dns.RemoteEndPoint = new DnsEndPoint("localhost", 4433);
        dns.Validate("options");
    }

    [Fact]
    public void MissingDefaultErrorCodesAreRejected()
    {
        QuicClientConnectionOptions o = ValidClient();
        o.DefaultStreamErrorCode = -1;
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options"));
        Assert.Equal("options", e.ParamName);
        Assert.Contains("DefaultStreamErrorCode", e.Message);

        o = ValidClient();
        o.DefaultCloseErrorCode = 1L << 62;
        Assert.Contains("DefaultCloseErrorCode", Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options")).Message);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(65536)]
    public void StreamLimitsOutOfRangeAreRejected(int value)
    {
        QuicClientConnectionOptions o = ValidClient();
        o.MaxInboundBidirectionalStreams = value;
        Assert.Contains("MaxInboundBidirectionalStreams", Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options")).Message);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(1)]
    [InlineData(1199)]
    [InlineData(65528)]
    public void MaxPathDatagramSizeOutOfRangeIsRejected(int value)
    {
        QuicClientConnectionOptions o = ValidClient();
        o.MaxPathDatagramSize = value;
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options"));
        Assert.Equal("options", e.ParamName);
        Assert.Contains("MaxPathDatagramSize", e.Message);
        var server = new QuicServerConnectionOptions { DefaultStreamErrorCode = 1, DefaultCloseErrorCode = 2, MaxPathDatagramSize = value };
        Assert.Contains("MaxPathDatagramSize", Assert.Throws<ArgumentOutOfRangeException>(() => server.Validate("options")).Message);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1200)]
    [InlineData(1500)]
    [InlineData(65527)]
    public void MaxPathDatagramSizeInRangeAndEcnSwitchPass(int value)
    {
        QuicClientConnectionOptions o = ValidClient();
        o.MaxPathDatagramSize = value;
        o.EnableEcn = value % 2 == 0;
        o.Validate("options");
        Assert.True(new QuicClientConnectionOptions().EnableEcn);
        Assert.Equal(0, new QuicClientConnectionOptions().MaxPathDatagramSize);
    }

    [Fact]
    public void NegativeTimeSpansAreRejectedButInfiniteIsAllowed()
    {
        QuicClientConnectionOptions o = ValidClient();
        o.IdleTimeout = Timeout.InfiniteTimeSpan;
        o.Validate("options");
        o.IdleTimeout = TimeSpan.FromSeconds(-2);
        Assert.Contains("IdleTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options")).Message);
        o = ValidClient();
        o.HandshakeTimeout = TimeSpan.FromMilliseconds(-5);
        Assert.Contains("HandshakeTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options")).Message);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(-64)]
    public void ReceiveWindowsMustBePowersOfTwo(int value)
    {
        QuicClientConnectionOptions o = ValidClient();
        o.InitialReceiveWindowSizes.RemotelyInitiatedBidirectionalStream = value;
        Assert.Contains("InitialReceiveWindowSizes.RemotelyInitiatedBidirectionalStream", Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options")).Message);
    }

    [Fact]
    public void ClientNeedsRemoteEndPointAuthOptionsAndAlpn()
    {
        QuicClientConnectionOptions o = ValidClient();
        o.RemoteEndPoint = null!;
        Assert.Contains("RemoteEndPoint", Assert.Throws<ArgumentNullException>(() => o.Validate("options")).Message);
        o = ValidClient();
        o.ClientAuthenticationOptions = null!;
        Assert.Contains("ClientAuthenticationOptions", Assert.Throws<ArgumentNullException>(() => o.Validate("options")).Message);
        o = ValidClient();
        o.ClientAuthenticationOptions.ApplicationProtocols = new List<SslApplicationProtocol>();
        Assert.Throws<ArgumentException>(() => o.Validate("options"));
    }

    [Fact]
    public void ServerNeedsAuthOptionsWithACertificateSource()
    {
        var o = new QuicServerConnectionOptions { DefaultCloseErrorCode = 0, DefaultStreamErrorCode = 0 };
        Assert.Throws<ArgumentNullException>(() => o.Validate("options"));
        o.ServerAuthenticationOptions = new SslServerAuthenticationOptions();
        Assert.Throws<ArgumentException>(() => o.Validate("options"));
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using X509Certificate2 cert = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256).CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        o.ServerAuthenticationOptions.ServerCertificate = cert;
        // As msquic: the server connection's ALPN list is mandatory.
        Assert.StartsWith("'SslApplicationProtocol' must be specified", Assert.Throws<ArgumentException>(() => o.Validate("options")).Message);
        o.ServerAuthenticationOptions.ApplicationProtocols = new List<SslApplicationProtocol>();
        Assert.Throws<ArgumentException>(() => o.Validate("options"));
        o.ServerAuthenticationOptions.ApplicationProtocols.Add(new SslApplicationProtocol("test"));
        o.Validate("options");
    }

    [Fact]
    public void ListenerOptionsNeedEndPointAlpnAndCallbackAndDefaultTheBacklog()
    {
        var o = new QuicListenerOptions();
        Assert.Contains("ListenEndPoint", Assert.Throws<ArgumentNullException>(() => o.Validate("options")).Message);
        o.ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 0);
        Assert.Contains("ApplicationProtocols", Assert.Throws<ArgumentNullException>(() => o.Validate("options")).Message);
        o.ApplicationProtocols = new List<SslApplicationProtocol> { new("test") };
        Assert.Contains("ConnectionOptionsCallback", Assert.Throws<ArgumentNullException>(() => o.Validate("options")).Message);
        o.ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions());
        o.Validate("options");
        Assert.Equal(512, o.ListenBacklog);
        o.ListenBacklog = -1;
        Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options"));
    }

    [Fact]
    public async Task ConnectValidatesSynchronouslyBeforeAnyAsyncWork()
    {
        QuicClientConnectionOptions o = ValidClient();
        o.DefaultCloseErrorCode = -1;
        // The exception comes from the call itself, not from awaiting the returned task.
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = QuicConnection.ConnectAsync(o); });
        Assert.Throws<ArgumentNullException>(() => { _ = QuicConnection.ConnectAsync(null!); });
        Assert.Throws<ArgumentNullException>(() => { _ = QuicListener.ListenAsync(new QuicListenerOptions()); });
        await Task.CompletedTask;
    }

    [Fact]
    public void QuicExceptionCarriesItsCodes()
    {
        var e = new QuicException(QuicError.StreamAborted, 42, "aborted");
        Assert.IsAssignableFrom<IOException>(e);
        Assert.Equal(QuicError.StreamAborted, e.QuicError);
        Assert.Equal(42, e.ApplicationErrorCode);
        Assert.Null(e.TransportErrorCode);
        Assert.Equal((int)System.Net.Quic.QuicError.ConnectionIdle, (int)QuicError.ConnectionIdle);
    }
}
