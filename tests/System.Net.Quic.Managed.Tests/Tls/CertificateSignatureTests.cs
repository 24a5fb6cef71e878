using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Which CertificateVerify schemes a certificate's key can serve (RFC 8446 §4.2.3), read from its algorithm identifier.</summary>
public class CertificateSignatureTests
{
    private static readonly SignatureScheme[] s_all =
    [
        SignatureScheme.EcdsaSecp256r1Sha256, SignatureScheme.EcdsaSecp384r1Sha384,
        SignatureScheme.RsaPssRsaeSha256, SignatureScheme.RsaPssRsaeSha384, SignatureScheme.RsaPssRsaeSha512,
    ];

    [Theory]
    [InlineData("p256", new ushort[] { 0x0403 })]
    [InlineData("p384", new ushort[] { 0x0503 })]
    [InlineData("p521", new ushort[0])]
    [InlineData("rsa", new ushort[] { 0x0804, 0x0805, 0x0806 })]
    public void EachKeyMatchesOnlyItsSchemes(string key, ushort[] expected)
    {
        using X509Certificate2 certificate = Create(key);
        Assert.Equal(expected, s_all.Where(s => CertificateSignature.SchemeMatchesKey(certificate, s)).Select(s => (ushort)s));
    }

    [Theory]
    [InlineData("p256")]
    [InlineData("p384")]
    [InlineData("rsa")]
    public void TheSelectedSchemeSignsAndVerifies(string key)
    {
        using X509Certificate2 certificate = Create(key);
        Assert.True(CertificateSignature.TrySelectScheme(certificate, s_all.Select(s => (ushort)s).ToList(), s_all, out SignatureScheme scheme));
        byte[] content = CertificateSignature.BuildSignedContent(server: true, new byte[32]);
        byte[] signature = CertificateSignature.Sign(certificate, scheme, content);
        using X509Certificate2 publicOnly = X509CertificateLoader.LoadCertificate(certificate.RawData);
        Assert.True(CertificateSignature.Verify(publicOnly, scheme, content, signature));
        content[^1] ^= 1;
        Assert.False(CertificateSignature.Verify(publicOnly, scheme, content, signature));
    }

    private static X509Certificate2 Create(string key)
    {
        var now = DateTimeOffset.UtcNow;
        if (key == "rsa")
        {
            using RSA rsa = RSA.Create(2048);
            return new System.Security.Cryptography.X509Certificates.CertificateRequest("CN=rsa", rsa, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1).CreateSelfSigned(now.AddDays(-1), now.AddDays(1));
        }
        ECCurve curve = key switch { "p256" => ECCurve.NamedCurves.nistP256, "p384" => ECCurve.NamedCurves.nistP384, _ => ECCurve.NamedCurves.nistP521 };
        using ECDsa ec = ECDsa.Create(curve);
        return new System.Security.Cryptography.X509Certificates.CertificateRequest("CN=" + key, ec, HashAlgorithmName.SHA256).CreateSelfSigned(now.AddDays(-1), now.AddDays(1));
    }
}
