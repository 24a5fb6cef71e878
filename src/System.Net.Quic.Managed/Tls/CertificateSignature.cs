using System.Collections.Generic;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// CertificateVerify signing and verification (RFC 8446 §4.4.3). Only ECDSA on P-256/P-384 and RSASSA-PSS with an
/// rsaEncryption key are accepted in CertificateVerify; rsa_pkcs1 appears only inside chains, which X509Chain checks.
/// .NET's ECDsa and RSA-PSS draw their nonces/salts from the OS RNG, not from IRandomSource, so signatures are not
/// reproducible under a seeded run (the rest of the handshake is).
/// </summary>
internal static class CertificateSignature
{
    private static ReadOnlySpan<byte> ServerContext => "TLS 1.3, server CertificateVerify"u8;
    private static ReadOnlySpan<byte> ClientContext => "TLS 1.3, client CertificateVerify"u8;

    /// <summary>64 spaces || context string || 0 || Transcript-Hash (RFC 8446 §4.4.3).</summary>
    public static byte[] BuildSignedContent(bool server, ReadOnlySpan<byte> transcriptHash)
    {
        ReadOnlySpan<byte> context = server ? ServerContext : ClientContext;
        byte[] content = new byte[64 + context.Length + 1 + transcriptHash.Length];
        content.AsSpan(0, 64).Fill(0x20);
        context.CopyTo(content.AsSpan(64));
        content[64 + context.Length] = 0;
        transcriptHash.CopyTo(content.AsSpan(64 + context.Length + 1));
        return content;
    }

    // RFC 5480: id-ecPublicKey with the named curves secp256r1 / secp384r1 (the parameters as DER OIDs); RFC 8017 rsaEncryption.
    private const string EcPublicKeyOid = "1.2.840.10045.2.1";
    private const string RsaEncryptionOid = "1.2.840.113549.1.1.1";
    private static ReadOnlySpan<byte> Secp256r1Parameters => [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
    private static ReadOnlySpan<byte> Secp384r1Parameters => [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22];

    /// <summary>
    /// True if <paramref name="scheme"/> can be produced/checked with this certificate's key: ECDSA schemes for an
    /// id-ecPublicKey on their named curve, rsa_pss_rsae_* for an rsaEncryption key (RFC 8446 §4.2.3). Read from the
    /// certificate's algorithm identifier, without decoding the key: a server tries each of its schemes in turn, and
    /// building an RSA key object (OpenSSL 3's decoders) for every try cost more than the RSA signature itself.
    /// </summary>
    public static bool SchemeMatchesKey(X509Certificate2 certificate, SignatureScheme scheme)
    {
        switch (certificate.GetKeyAlgorithm())
        {
            case EcPublicKeyOid:
                ReadOnlySpan<byte> curve = scheme switch
                {
                    SignatureScheme.EcdsaSecp256r1Sha256 => Secp256r1Parameters,
                    SignatureScheme.EcdsaSecp384r1Sha384 => Secp384r1Parameters,
                    _ => default,
                };
                return !curve.IsEmpty && curve.SequenceEqual(certificate.GetKeyAlgorithmParameters());
            case RsaEncryptionOid:
                return scheme is SignatureScheme.RsaPssRsaeSha256 or SignatureScheme.RsaPssRsaeSha384 or SignatureScheme.RsaPssRsaeSha512;
            default:
                return false;
        }
    }

    /// <summary>Picks the first of our schemes that the peer offered and the certificate key can produce.</summary>
    public static bool TrySelectScheme(X509Certificate2 certificate, List<ushort> peerSchemes, SignatureScheme[] ourSchemes, out SignatureScheme scheme)
    {
        foreach (SignatureScheme s in ourSchemes)
        {
            if (peerSchemes.Contains((ushort)s) && SchemeMatchesKey(certificate, s))
            {
                scheme = s;
                return true;
            }
        }
        scheme = default;
        return false;
    }

    private static HashAlgorithmName HashOf(SignatureScheme scheme) => scheme switch
    {
        SignatureScheme.EcdsaSecp384r1Sha384 or SignatureScheme.RsaPssRsaeSha384 => HashAlgorithmName.SHA384,
        SignatureScheme.RsaPssRsaeSha512 => HashAlgorithmName.SHA512,
        _ => HashAlgorithmName.SHA256,
    };

    public static byte[] Sign(X509Certificate2 certificate, SignatureScheme scheme, byte[] content)
    {
        using (ECDsa? ec = certificate.GetECDsaPrivateKey())
        {
            if (ec != null) return ec.SignData(content, HashOf(scheme), DSASignatureFormat.Rfc3279DerSequence);
        }
        using RSA rsa = certificate.GetRSAPrivateKey() ?? throw new CryptographicException("The certificate has no usable private key.");
        return rsa.SignData(content, HashOf(scheme), RSASignaturePadding.Pss);
    }

    /// <summary>Verifies; never throws for attacker input.</summary>
    public static bool Verify(X509Certificate2 certificate, SignatureScheme scheme, byte[] content, byte[] signature)
    {
        if (!SchemeMatchesKey(certificate, scheme)) return false;
        try
        {
            using (ECDsa? ec = certificate.GetECDsaPublicKey())
            {
                if (ec != null) return ec.VerifyData(content, signature, HashOf(scheme), DSASignatureFormat.Rfc3279DerSequence);
            }
            using RSA? rsa = certificate.GetRSAPublicKey();
            return rsa != null && rsa.VerifyData(content, signature, HashOf(scheme), RSASignaturePadding.Pss);
        }
        catch (CryptographicException)
        {
            return false;
        }
    }
}
