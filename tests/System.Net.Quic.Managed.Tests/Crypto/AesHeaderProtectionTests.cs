using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>
/// AES header protection (RFC 9001 §5.4.3) on both paths: the AES-NI block encryptor and the portable ECB transform
/// must give the same mask, and the RFC 9001 Appendix A.2 sample must give the RFC's mask.
/// </summary>
public class AesHeaderProtectionTests
{
    [Fact]
    public void Rfc9001ClientInitialMaskOnBothPaths()
    {
        // RFC 9001 Appendix A.2: client hp key, the sample from the protected packet, and the resulting 5-byte mask.
        byte[] hp = Convert.FromHexString(Rfc9001Vectors.V1ClientHp);
        byte[] sample = Convert.FromHexString(Rfc9001Vectors.V1ClientSample);
        byte[] expected = Convert.FromHexString(Rfc9001Vectors.V1ClientMask);
        foreach (bool intrinsics in new[] { false, AesNiBlockEncryptor.IsSupported })
        {
            var key = new AesHeaderProtectionKey(hp, intrinsics);
            byte[] mask = new byte[5];
            key.ComputeMask(sample, mask);
            Assert.Equal(expected, mask);
            key.Release();
        }
    }

    [SkippableTheory]
    [InlineData(16)]
    [InlineData(32)]
    public void AesNiMatchesTheBclForRandomKeysAndBlocks(int keyLength)
    {
        Skip.IfNot(AesNiBlockEncryptor.IsSupported, "this CPU has no AES-NI: the portable path is the only one");
        var random = new Random(9001 + keyLength);
        byte[] key = new byte[keyLength];
        byte[] block = new byte[16];
        byte[] ours = new byte[16];
        for (int k = 0; k < 200; k++)
        {
            random.NextBytes(key);
            using Aes reference = Aes.Create();
            reference.Key = key;
            var encryptor = new AesNiBlockEncryptor(key);
            for (int b = 0; b < 20; b++)
            {
                random.NextBytes(block);
                encryptor.EncryptBlock(block, ours);
                Assert.Equal(reference.EncryptEcb(block, PaddingMode.None), ours);
            }
        }
    }

    [SkippableFact]
    public void Fips197AppendixCVectors()
    {
        Skip.IfNot(AesNiBlockEncryptor.IsSupported, "this CPU has no AES-NI: the portable path is the only one");
        // FIPS 197 Appendix C.1 (AES-128) and C.3 (AES-256): plaintext 00112233445566778899aabbccddeeff.
        byte[] plaintext = Convert.FromHexString("00112233445566778899aabbccddeeff");
        byte[] output = new byte[16];
        new AesNiBlockEncryptor(Convert.FromHexString("000102030405060708090a0b0c0d0e0f")).EncryptBlock(plaintext, output);
        Assert.Equal(Convert.FromHexString("69c4e0d86a7b0430d8cdb78070b4c55a"), output);
        new AesNiBlockEncryptor(Convert.FromHexString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")).EncryptBlock(plaintext, output);
        Assert.Equal(Convert.FromHexString("8ea2b7ca516745bfeafc49904b496089"), output);
    }
}
