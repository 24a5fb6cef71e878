using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>A throwaway self-signed ECDSA P-256 server certificate for the probes (the client accepts any certificate).</summary>
internal static class ProbeCertificate
{
    public static X509Certificate2 Create()
    {
        using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=probe", key, HashAlgorithmName.SHA256);
        var san = new SubjectAlternativeNameBuilder();
        san.AddDnsName("probe");
        request.CertificateExtensions.Add(san.Build());
        using X509Certificate2 ephemeral = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        // Re-import so that the private key is usable by the platform TLS stack on every OS.
        return X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), null);
    }
}
