using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>A CipherSuitesPolicy reaches the managed TLS engine: only QUIC's TLS 1.3 AEAD suites, in the policy's order.</summary>
public class CipherSuitesPolicyMappingTests
{
    [SkippableFact]
    public void ClientOffersOnlyThePolicysQuicSuitesInItsOrder()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        var ssl = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
            CipherSuitesPolicy = new CipherSuitesPolicy(new[]
            {
                TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, // TLS 1.2: not usable by QUIC, dropped
                TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
                TlsCipherSuite.TLS_AES_256_GCM_SHA384,
            }),
        };
        TlsHandshakeOptions tls = ManagedOptionsMapping.ToClientTls(ssl, "localhost", new QuicConnection());
        Assert.Equal(new[] { TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, TlsCipherSuite.TLS_AES_256_GCM_SHA384 }, tls.CipherSuites);
    }

    [SkippableFact]
    public void ServerPicksByItsPolicy()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "CipherSuitesPolicy needs OpenSSL");
        var ssl = new SslServerAuthenticationOptions
        {
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
            CipherSuitesPolicy = new CipherSuitesPolicy(new[] { TlsCipherSuite.TLS_AES_256_GCM_SHA384, TlsCipherSuite.TLS_AES_128_GCM_SHA256 }),
        };
        TlsHandshakeOptions tls = ManagedOptionsMapping.ToServerTls(ssl, new List<SslApplicationProtocol>(), new QuicConnection());
        Assert.Equal(new[] { TlsCipherSuite.TLS_AES_256_GCM_SHA384, TlsCipherSuite.TLS_AES_128_GCM_SHA256 }, tls.CipherSuites);
    }

    [Fact]
    public void NoPolicyKeepsTheDefaults()
    {
        var ssl = new SslClientAuthenticationOptions { TargetHost = "localhost", ApplicationProtocols = new List<SslApplicationProtocol> { new("test") } };
        TlsHandshakeOptions tls = ManagedOptionsMapping.ToClientTls(ssl, "localhost", new QuicConnection());
        Assert.Equal(new TlsHandshakeOptions().CipherSuites, tls.CipherSuites);
    }
}
