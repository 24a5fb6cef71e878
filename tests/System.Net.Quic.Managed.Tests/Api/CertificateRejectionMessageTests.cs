using System.Security.Authentication;
using System.Net.Quic.Managed.Tests.Tls;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// A client that rejects the server's certificate says why in SslStream's and msquic's words: the callback's refusal as
/// "rejected by the provided RemoteCertificateValidationCallback", a chain failure naming the chain status.
/// </summary>
public class CertificateRejectionMessageTests
{
    [Fact]
    public async Task ARejectingCallbackIsReportedAsMsQuicWordsIt()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => false;
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(QuicProvider.Managed, options));
        Assert.Equal("The remote certificate was rejected by the provided RemoteCertificateValidationCallback.", e.Message);
    }

    [Fact]
    public async Task AnUnknownIssuerIsNamed()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        // The test root is in no store and the server does not send it: the chain stops short of a root (PartialChain).
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint, trustTestRoot: false);
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(QuicProvider.Managed, options));
        Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: PartialChain", e.Message);
    }

    [Fact]
    public async Task AnExpiredCertificateIsNamed()
    {
        using var expired = TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256, expired: true);
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed, configure: o => o.ServerAuthenticationOptions.ServerCertificate = expired);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(QuicProvider.Managed, options));
        Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: NotTimeValid", e.Message);
    }

    [Fact]
    public async Task AWrongHostNameNamesThePolicyError()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.ClientAuthenticationOptions.TargetHost = "example.com";
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(QuicProvider.Managed, options));
        Assert.Equal("The remote certificate is invalid according to the validation procedure: RemoteCertificateNameMismatch", e.Message);
    }
}
