using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tests.Tls;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>The transport with the real managed TLS 1.3 engine (not the fake) on the simulated network.</summary>
public class ConnectionTlsTests
{
    private static readonly X509Certificate2 s_certificate = TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256);

    internal static void UseRealTls(QuicPair pair, string serverAlpn = "test", string clientAlpn = "test", TlsCipherSuite? suite = null,
        RemoteCertificateValidationCallback? validation = null)
    {
        int seed = pair.Seed;
        pair.ServerHandshakeFactory = () => new TlsCryptoHandshake(true, new TlsHandshakeOptions
        {
            Certificate = s_certificate,
            ApplicationProtocols = new List<SslApplicationProtocol> { new(serverAlpn) },
            Random = new SeededRandomSource(seed * 7 + 1),
        });
        pair.ClientHandshakeFactory = () =>
        {
            var options = new TlsHandshakeOptions
            {
                ServerName = "localhost",
                ApplicationProtocols = new List<SslApplicationProtocol> { new(clientAlpn) },
                RemoteCertificateValidation = validation ?? ((_, _, _, _) => true),
                Random = new SeededRandomSource(seed * 7 + 2),
            };
            if (suite is not null) options.CipherSuites = new[] { suite.Value };
            return new TlsCryptoHandshake(false, options);
        };
    }

    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)]
    public void HandshakeAndTransferWithEachCipherSuite(TlsCipherSuite suite)
    {
        using var pair = new QuicPair(seed: 30, configure: p => UseRealTls(p, suite: suite));
        Assert.True(pair.Handshake());
        Assert.Equal(suite, pair.ClientConnection!.Handshake.NegotiatedCipherSuite);
        Assert.Equal("test", pair.ServerConnection!.Handshake.NegotiatedApplicationProtocol.ToString());
        Assert.Equal("localhost", pair.ServerConnection.Handshake.ServerName);
        Assert.NotNull(pair.ClientConnection.Handshake.RemoteCertificate);
        var transfer = new StreamTransfer(pair, pair.ClientConnection, pair.ServerConnection, 512 * 1024);
        transfer.Run(30_000_000);
        Assert.True(transfer.ReceivedFin);
        Assert.False(transfer.Corrupted);
    }

    [Fact]
    public void AlpnMismatchClosesWithCryptoError0x178()
    {
        using var pair = new QuicPair(seed: 31, configure: p => UseRealTls(p, serverAlpn: "h3", clientAlpn: "hq-interop"));
        pair.Connect();
        pair.RunUntil(() => pair.ClientConnection!.Phase != ConnectionPhase.Open, 5_000_000);
        ConnectionError error = pair.ClientConnection!.Error!;
        Assert.True(error.ByPeer);
        Assert.Equal(0x178UL, error.Code); // CRYPTO_ERROR + no_application_protocol (RFC 9001 §8.1)
    }

    [Fact]
    public void RejectedCertificateClosesWithCryptoError()
    {
        using var pair = new QuicPair(seed: 32, configure: p => UseRealTls(p, validation: (_, _, _, _) => false));
        pair.Connect();
        pair.RunUntil(() => pair.ClientConnection!.Phase != ConnectionPhase.Open, 5_000_000);
        ConnectionError error = pair.ClientConnection!.Error!;
        Assert.False(error.ByPeer);
        Assert.Equal(ConnectionErrorSource.Transport, error.Source);
        Assert.InRange(error.Code, 0x100UL, 0x1ffUL); // a TLS alert (bad_certificate family)
        pair.RunUntil(() => pair.ServerConnection is { Phase: not ConnectionPhase.Open }, 5_000_000);
        Assert.Equal(error.Code, pair.ServerConnection!.Error!.Code); // the server learned why
    }

    [Fact]
    public void HandshakeSurvivesHeavyLoss()
    {
        var link = new Simulation.LinkConditions { DelayUs = 25_000, LossProbability = 0.3 };
        using var pair = new QuicPair(seed: 33, link, configure: p => UseRealTls(p));
        Assert.True(pair.Handshake(60_000_000));
    }
}
