using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>
/// The AES-NI/PCLMULQDQ AES-GCM used for packet protection must agree with the BCL's <see cref="AesGcm"/> byte for
/// byte (ciphertext and tag), accept what it seals, and reject any change to nonce, AAD, ciphertext or tag.
/// </summary>
public class AesNiGcmTests
{
    // The GCM specification's test case 4 (McGrew and Viega, "The Galois/Counter Mode of Operation", appendix B):
    // AES-128, 96-bit IV, 20 bytes of AAD, 60 bytes of plaintext (a partial last block).
    private const string Case4Key = "feffe9928665731c6d6a8f9467308308";
    private const string Case4Iv = "cafebabefacedbaddecaf888";
    private const string Case4Aad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
    private const string Case4Plaintext = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
    private const string Case4Ciphertext = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091";
    private const string Case4Tag = "5bc94fbc3221a5db94fae95ae7121a47";

    [SkippableFact]
    public void GcmSpecificationTestCase4()
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var gcm = new AesNiGcm(Convert.FromHexString(Case4Key));
        byte[] plaintext = Convert.FromHexString(Case4Plaintext);
        byte[] ciphertext = new byte[plaintext.Length];
        byte[] tag = new byte[16];
        gcm.Encrypt(Convert.FromHexString(Case4Iv), plaintext, ciphertext, tag, Convert.FromHexString(Case4Aad));
        Assert.Equal(Case4Ciphertext, Convert.ToHexStringLower(ciphertext));
        Assert.Equal(Case4Tag, Convert.ToHexStringLower(tag));

        byte[] opened = new byte[ciphertext.Length];
        Assert.True(gcm.TryDecrypt(Convert.FromHexString(Case4Iv), ciphertext, tag, opened, Convert.FromHexString(Case4Aad)));
        Assert.Equal(plaintext, opened);
    }

    [SkippableTheory]
    [InlineData(16)]
    [InlineData(32)]
    public void MatchesAesGcmForRandomInputs(int keyLength)
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var random = new Random(9221 + keyLength);
        int[] lengths = [0, 1, 15, 16, 17, 31, 127, 128, 129, 255, 256, 1000, 1162, 1200, 1452, 4000];
        for (int round = 0; round < 300; round++)
        {
            byte[] key = new byte[keyLength];
            byte[] nonce = new byte[12];
            random.NextBytes(key);
            random.NextBytes(nonce);
            int length = round < lengths.Length ? lengths[round] : random.Next(0, 2100);
            byte[] aad = new byte[random.Next(0, 70)];
            byte[] plaintext = new byte[length];
            random.NextBytes(aad);
            random.NextBytes(plaintext);

            using var reference = new AesGcm(key, 16);
            byte[] expected = new byte[length];
            byte[] expectedTag = new byte[16];
            reference.Encrypt(nonce, plaintext, expected, expectedTag, aad);

            var gcm = new AesNiGcm(key);
            byte[] inPlace = (byte[])plaintext.Clone();
            byte[] tag = new byte[16];
            gcm.Encrypt(nonce, inPlace, inPlace, tag, aad);
            Assert.Equal(expected, inPlace);
            Assert.Equal(expectedTag, tag);

            Assert.True(gcm.TryDecrypt(nonce, inPlace, tag, inPlace, aad));
            Assert.Equal(plaintext, inPlace);
        }
    }

    [SkippableFact]
    public void RejectsEveryTamperedInput()
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var random = new Random(5);
        byte[] key = new byte[16];
        byte[] nonce = new byte[12];
        byte[] aad = new byte[24];
        byte[] plaintext = new byte[300];
        random.NextBytes(key);
        random.NextBytes(nonce);
        random.NextBytes(aad);
        random.NextBytes(plaintext);
        var gcm = new AesNiGcm(key);
        byte[] ciphertext = new byte[plaintext.Length];
        byte[] tag = new byte[16];
        gcm.Encrypt(nonce, plaintext, ciphertext, tag, aad);

        byte[] output = new byte[ciphertext.Length];
        foreach (byte[] target in new[] { nonce, aad, ciphertext, tag })
        {
            for (int i = 0; i < target.Length; i += 7)
            {
                target[i] ^= 0x10;
                output.AsSpan().Fill(0xAA);
                Assert.False(gcm.TryDecrypt(nonce, ciphertext, tag, output, aad));
                Assert.All(output, b => Assert.Equal(0, b)); // nothing of an unauthenticated plaintext is left
                target[i] ^= 0x10;
            }
        }
        Assert.True(gcm.TryDecrypt(nonce, ciphertext, tag, output, aad));
        Assert.Equal(plaintext, output);
    }

    [SkippableFact]
    public void RejectsBadArguments()
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var gcm = new AesNiGcm(new byte[16]);
        Assert.Throws<ArgumentException>(() => gcm.Encrypt(new byte[8], new byte[4], new byte[4], new byte[16], default));
        Assert.Throws<ArgumentException>(() => gcm.Encrypt(new byte[12], new byte[4], new byte[5], new byte[16], default));
        Assert.Throws<ArgumentException>(() => gcm.Encrypt(new byte[12], new byte[4], new byte[4], new byte[12], default));
        Assert.Throws<ArgumentException>(() => new AesNiGcm(new byte[24]));
    }

    [Fact]
    public void PacketProtectionUsesItWhereTheCpuHasTheInstructions()
    {
        // The RFC 9001 packet vectors (PacketProtectionVectorTests) then run through this class on such CPUs.
        using PacketProtectionKeys keys = PacketProtectionKeys.Create(new byte[32], System.Net.Security.TlsCipherSuite.TLS_AES_128_GCM_SHA256, System.Net.Quic.Managed.Wire.QuicVersion.V1);
        Assert.Equal(AesNiGcm.IsSupported, keys.UsesAesNiGcm);
    }
}
