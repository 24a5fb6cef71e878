using System.Net.Quic.Managed.Crypto;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Crypto;

/// <summary>
/// The AES-NI/PCLMULQDQ AES-GCM used for packet protection must agree with the BCL's <see cref="AesGcm"/> byte for
/// byte (ciphertext and tag), accept what it seals, and reject any change to nonce, AAD, ciphertext or tag. Every case
/// runs on both GHASH widths: 128-bit PCLMULQDQ and, where the CPU has it, 256-bit VPCLMULQDQ.
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
    private const string Case3Plaintext = Case4Plaintext + "1aafd255";
    private const string Case3Ciphertext = Case4Ciphertext + "473f5985";
    private const string Case16Ciphertext = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662";

    /// <summary>Both GHASH widths where the CPU has 256-bit VPCLMULQDQ, else only the 128-bit one.</summary>
    public static TheoryData<bool> Widths()
    {
        var data = new TheoryData<bool> { false };
        if (AesNiGcm.IsVector256Supported) data.Add(true);
        return data;
    }

    /// <summary>The GCM specification's test cases 1-4, 13 and 16 (key, IV, AAD, plaintext, ciphertext, tag).</summary>
    public static TheoryData<bool, string, string, string, string, string, string> SpecificationCases()
    {
        var data = new TheoryData<bool, string, string, string, string, string, string>();
        foreach (bool wide in Widths())
        {
            string zero128 = new('0', 32);
            string zero256 = new('0', 64);
            string zeroIv = new('0', 24);
            data.Add(wide, zero128, zeroIv, "", "", "", "58e2fccefa7e3061367f1d57a4e7455a"); // case 1
            data.Add(wide, zero128, zeroIv, "", zero128, "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"); // case 2
            data.Add(wide, Case4Key, Case4Iv, "", Case3Plaintext, Case3Ciphertext, "4d5c2af327cd64a62cf35abd2ba6fab4"); // case 3
            data.Add(wide, Case4Key, Case4Iv, Case4Aad, Case4Plaintext, Case4Ciphertext, Case4Tag); // case 4
            data.Add(wide, zero256, zeroIv, "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"); // case 13
            data.Add(wide, Case4Key + Case4Key, Case4Iv, Case4Aad, Case4Plaintext, Case16Ciphertext, "76fc6ece0f4e1768cddf8853bb2d551b"); // case 16
        }
        return data;
    }

    [SkippableTheory]
    [MemberData(nameof(SpecificationCases))]
    public void GcmSpecificationTestCases(bool wide, string key, string iv, string aad, string plaintextHex, string ciphertextHex, string tagHex)
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var gcm = new AesNiGcm(Convert.FromHexString(key), wide);
        Assert.Equal(wide, gcm.UsesVector256);
        byte[] plaintext = Convert.FromHexString(plaintextHex);
        byte[] ciphertext = new byte[plaintext.Length];
        byte[] tag = new byte[16];
        gcm.Encrypt(Convert.FromHexString(iv), plaintext, ciphertext, tag, Convert.FromHexString(aad));
        Assert.Equal(ciphertextHex, Convert.ToHexStringLower(ciphertext));
        Assert.Equal(tagHex, Convert.ToHexStringLower(tag));

        byte[] opened = new byte[ciphertext.Length];
        Assert.True(gcm.TryDecrypt(Convert.FromHexString(iv), ciphertext, tag, opened, Convert.FromHexString(aad)));
        Assert.Equal(plaintext, opened);
    }

    [SkippableFact]
    public void DefaultsToTheWidestGhashTheCpuHas()
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        Assert.Equal(AesNiGcm.IsVector256Supported, new AesNiGcm(new byte[16]).UsesVector256);
        if (!AesNiGcm.IsVector256Supported) Assert.Throws<PlatformNotSupportedException>(() => new AesNiGcm(new byte[16], useVector256: true));
    }

    /// <summary>
    /// Every data length 0..1,600 (whole 8-block passes, 0-7 whole tail blocks, every partial-block length, QUIC's
    /// 1,200-1,452-byte packets) and AAD lengths 0..300 (one and several 16-block GHASH groups), both key sizes, both
    /// GHASH widths, separate and in-place buffers, against <see cref="AesGcm"/>.
    /// </summary>
    [SkippableTheory]
    [MemberData(nameof(Widths))]
    public void MatchesAesGcmForEveryLength(bool wide)
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        var random = new Random(wide ? 77 : 78);
        foreach (int keyLength in new[] { 16, 32 })
        {
            byte[] key = new byte[keyLength];
            random.NextBytes(key);
            var gcm = new AesNiGcm(key, wide);
            using var reference = new AesGcm(key, 16);
            for (int length = 0; length <= 1600; length++)
            {
                byte[] nonce = new byte[12];
                random.NextBytes(nonce);
                byte[] aad = new byte[length <= 300 ? length : random.Next(0, 64)];
                byte[] plaintext = new byte[length];
                random.NextBytes(aad);
                random.NextBytes(plaintext);
                byte[] expected = new byte[length];
                byte[] expectedTag = new byte[16];
                reference.Encrypt(nonce, plaintext, expected, expectedTag, aad);

                byte[] ciphertext = new byte[length];
                byte[] tag = new byte[16];
                gcm.Encrypt(nonce, plaintext, ciphertext, tag, aad);
                Assert.True(expected.AsSpan().SequenceEqual(ciphertext), $"ciphertext differs at length {length}");
                Assert.True(expectedTag.AsSpan().SequenceEqual(tag), $"tag differs at length {length}");

                byte[] opened = new byte[length];
                Assert.True(gcm.TryDecrypt(nonce, ciphertext, tag, opened, aad), $"own tag rejected at length {length}");
                Assert.True(plaintext.AsSpan().SequenceEqual(opened), $"plaintext differs at length {length}");
                Assert.True(gcm.TryDecrypt(nonce, ciphertext, tag, ciphertext, aad), $"in-place open failed at length {length}");
                Assert.True(plaintext.AsSpan().SequenceEqual(ciphertext), $"in-place plaintext differs at length {length}");
            }
        }
    }

    [SkippableTheory]
    [InlineData(16, false)]
    [InlineData(32, false)]
    [InlineData(16, true)]
    [InlineData(32, true)]
    public void MatchesAesGcmForRandomInputs(int keyLength, bool wide)
    {
        Skip.IfNot(AesNiGcm.IsSupported, "this CPU lacks AES-NI/PCLMULQDQ: packet protection uses AesGcm");
        Skip.If(wide && !AesNiGcm.IsVector256Supported, "this CPU lacks 256-bit VPCLMULQDQ");
        var random = new Random(9221 + keyLength);
        int[] lengths = [0, 1, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256, 257, 1000, 1162, 1171, 1200, 1423, 1452, 4000, 70000];
        for (int round = 0; round < 300; round++)
        {
            byte[] key = new byte[keyLength];
            byte[] nonce = new byte[12];
            random.NextBytes(key);
            random.NextBytes(nonce);
            int length = round < lengths.Length ? lengths[round] : random.Next(0, 2100);
            byte[] aad = new byte[round < lengths.Length ? length % 600 : random.Next(0, 70)];
            byte[] plaintext = new byte[length];
            random.NextBytes(aad);
            random.NextBytes(plaintext);

            using var reference = new AesGcm(key, 16);
            byte[] expected = new byte[length];
            byte[] expectedTag = new byte[16];
            reference.Encrypt(nonce, plaintext, expected, expectedTag, aad);

            var gcm = new AesNiGcm(key, wide);
            byte[] inPlace = (byte[])plaintext.Clone();
            byte[] tag = new byte[16];
            gcm.Encrypt(nonce, inPlace, inPlace, tag, aad);
            Assert.Equal(expected, inPlace);
            Assert.Equal(expectedTag, tag);

            Assert.True(gcm.TryDecrypt(nonce, inPlace, tag, inPlace, aad));
            Assert.Equal(plaintext, inPlace);
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Widths))]
    public void RejectsEveryTamperedInput(bool wide)
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
        var gcm = new AesNiGcm(key, wide);
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
