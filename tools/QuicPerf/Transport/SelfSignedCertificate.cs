using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Creates the in-process server certificate (no files, no installs).</summary>
public static class SelfSignedCertificate
{
    public static X509Certificate2 Create(bool rsa = false)
    {
        var subject = new X500DistinguishedName("CN=localhost");
        var san = new SubjectAlternativeNameBuilder();
        san.AddDnsName("localhost");
        san.AddIpAddress(IPAddress.Loopback);
        san.AddIpAddress(IPAddress.IPv6Loopback);

        CertificateRequest request;
        IDisposable key;
        if (rsa)
        {
            var rsaKey = RSA.Create(2048);
            request = new CertificateRequest(subject, rsaKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pss);
            key = rsaKey;
        }
        else
        {
            var ecKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            request = new CertificateRequest(subject, ecKey, HashAlgorithmName.SHA256);
            key = ecKey;
        }

        using (key)
        {
            request.CertificateExtensions.Add(san.Build());
            request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
            request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, false));
            request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
                new OidCollection { new Oid("1.3.6.1.5.5.7.3.1") }, false));
            DateTimeOffset now = DateTimeOffset.UtcNow;
            using X509Certificate2 ephemeral = request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(1));
            // Round-trip through PKCS#12 so SslStream (OpenSSL) gets a persisted-key certificate on every OS.
            return X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), null);
        }
    }
}
