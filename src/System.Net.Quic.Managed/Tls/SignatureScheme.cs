namespace System.Net.Quic.Managed.Tls;

/// <summary>Signature schemes (RFC 8446 §4.2.3). The rsa_pkcs1 values are only meaningful inside certificate chains.</summary>
internal enum SignatureScheme : ushort
{
    RsaPkcs1Sha256 = 0x0401,
    RsaPkcs1Sha384 = 0x0501,
    RsaPkcs1Sha512 = 0x0601,
    EcdsaSecp256r1Sha256 = 0x0403,
    EcdsaSecp384r1Sha384 = 0x0503,
    EcdsaSecp521r1Sha512 = 0x0603,
    RsaPssRsaeSha256 = 0x0804,
    RsaPssRsaeSha384 = 0x0805,
    RsaPssRsaeSha512 = 0x0806,
}
