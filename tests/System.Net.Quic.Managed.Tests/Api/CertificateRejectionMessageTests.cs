using System.Security.Authentication;
using System.Net.Quic.Managed.Tests.Tls;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// A client that rejects the server's certificate says why in SslStream's and msquic's words: the callback's refusal as
/// "rejected by the provided RemoteCertificateValidationCallback", a chain failure naming the chain status, anything
/// else naming the SslPolicyErrors.
/// </summary>
public class CertificateRejectionMessageTests
{
    [Fact]
    public async Task ARejectingCallbackIsReportedAsMsQuicWordsIt()
        => Assert.Equal("The remote certificate was rejected by the provided RemoteCertificateValidationCallback.",
            await RejectionMessageAsync(client: o => o.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => false));

    [Fact]
    public async Task AnUnknownIssuerIsNamed()
        // The test root is in no store and the server does not send it: the chain stops short of a root (PartialChain).
        => Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: PartialChain",
            await RejectionMessageAsync(client: o => o.ClientAuthenticationOptions.CertificateChainPolicy = null));

    [Fact]
    public async Task AnExpiredCertificateIsNamed()
    {
        using var expired = TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256, expired: true);
        Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: NotTimeValid",
            await RejectionMessageAsync(server: o => o.ServerAuthenticationOptions.ServerCertificate = expired));
    }

    [Fact]
    public async Task AWrongHostNameNamesThePolicyError()
        => Assert.Equal("The remote certificate is invalid according to the validation procedure: RemoteCertificateNameMismatch",
            await RejectionMessageAsync(client: o => o.ClientAuthenticationOptions.TargetHost = "example.com"));

    /// <summary>Connects a managed client to a managed listener, both configured as asked, and returns the client's AuthenticationException message.</summary>
    private static async Task<string> RejectionMessageAsync(Action<QuicServerConnectionOptions>? server = null, Action<QuicClientConnectionOptions>? client = null)
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed, configure: server);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        client?.Invoke(options);
        AuthenticationException e = await Assert.ThrowsAsync<AuthenticationException>(() => ConnectAsync(QuicProvider.Managed, options));
        return e.Message;
    }
}
