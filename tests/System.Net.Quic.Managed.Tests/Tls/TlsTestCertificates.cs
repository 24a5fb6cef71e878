using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using TlsCertificateRequest = System.Security.Cryptography.X509Certificates.CertificateRequest;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>In-process test PKI: one ECDSA P-256 root CA and leaves of each key type it signs.</summary>
internal static class TlsTestCertificates
{
    public enum KeyKind { EcdsaP256, EcdsaP384, Rsa2048 }

    private static readonly Lazy<X509Certificate2> s_root = new(() => CreateRoot("CN=QuicManaged Test Root"));
    private static readonly Lazy<X509Certificate2> s_otherRoot = new(() => CreateRoot("CN=Untrusted Root"));

    public static X509Certificate2 Root => s_root.Value;

    public static X509Certificate2 OtherRoot => s_otherRoot.Value;

    private static X509Certificate2 CreateRoot(string name)
    {
        using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var req = new TlsCertificateRequest(name, key, HashAlgorithmName.SHA256);
        req.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        req.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        req.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(req.PublicKey, false));
        return req.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(5));
    }

    /// <summary>An intermediate CA (ECDSA P-256) signed by <see cref="Root"/>.</summary>
    public static X509Certificate2 CreateIntermediate()
    {
        using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var req = new TlsCertificateRequest("CN=QuicManaged Test Intermediate", key, HashAlgorithmName.SHA256);
        req.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, true, 0, true));
        req.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        req.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(req.PublicKey, false));
        byte[] serial = new byte[8];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7f;
        using ECDsa rootKey = Root.GetECDsaPrivateKey()!;
        using X509Certificate2 cert = req.Create(Root.SubjectName, X509SignatureGenerator.CreateForECDsa(rootKey), DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(2), serial);
        return cert.CopyWithPrivateKey(key);
    }

    public static X509Certificate2 CreateLeaf(KeyKind kind, string dnsName = "localhost", X509Certificate2? issuer = null, bool expired = false)
    {
        issuer ??= Root;
        DateTimeOffset notBefore = expired ? DateTimeOffset.UtcNow.AddDays(-30) : DateTimeOffset.UtcNow.AddDays(-1);
        DateTimeOffset notAfter = expired ? DateTimeOffset.UtcNow.AddDays(-2) : DateTimeOffset.UtcNow.AddYears(1);
        byte[] serial = new byte[8];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7f;
        var san = new SubjectAlternativeNameBuilder();
        san.AddDnsName(dnsName);
        var eku = new OidCollection { new Oid("1.3.6.1.5.5.7.3.1"), new Oid("1.3.6.1.5.5.7.3.2") };
        using ECDsa issuerKey = issuer.GetECDsaPrivateKey()!;
        var generator = X509SignatureGenerator.CreateForECDsa(issuerKey);
        switch (kind)
        {
            case KeyKind.Rsa2048:
            {
                using RSA key = RSA.Create(2048);
                var req = new TlsCertificateRequest("CN=" + dnsName, key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
                req.CertificateExtensions.Add(san.Build());
                req.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(eku, false));
                using X509Certificate2 cert = req.Create(issuer.SubjectName, generator, notBefore, notAfter, serial);
                return cert.CopyWithPrivateKey(key);
            }
            default:
            {
                using ECDsa key = ECDsa.Create(kind == KeyKind.EcdsaP384 ? ECCurve.NamedCurves.nistP384 : ECCurve.NamedCurves.nistP256);
                var req = new TlsCertificateRequest("CN=" + dnsName, key, kind == KeyKind.EcdsaP384 ? HashAlgorithmName.SHA384 : HashAlgorithmName.SHA256);
                req.CertificateExtensions.Add(san.Build());
                req.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(eku, false));
                using X509Certificate2 cert = req.Create(issuer.SubjectName, generator, notBefore, notAfter, serial);
                return cert.CopyWithPrivateKey(key);
            }
        }
    }

    public static X509ChainPolicy TrustRoot(X509Certificate2 root)
    {
        var policy = new X509ChainPolicy
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = X509RevocationMode.NoCheck,
        };
        policy.CustomTrustStore.Add(root);
        return policy;
    }
}
