using System.Net.Quic.Managed.Crypto;

namespace System.Net.Quic.Managed.Tests.Crypto;

public class ChaCha20BlockTests
{
    private static byte[] Key0To31()
    {
        byte[] key = new byte[32];
        for (int i = 0; i < 32; i++) key[i] = (byte)i;
        return key;
    }

    // RFC 8439 §2.3.2: Test Vector for the ChaCha20 Block Function.
    [Fact]
    public void Rfc8439_2_3_2_BlockFunction()
    {
        byte[] nonce = Convert.FromHexString("000000090000004a00000000");
        byte[] block = new byte[64];
        ChaCha20Block.Compute(Key0To31(), 1, nonce, block);
        string expected =
            "10f1e7e4d13b5915500fdd1fa32071c4" +
            "c7d1f4c733c068030422aa9ac3d46c4e" +
            "d2826446079faa0914c2d705d98b02a2" +
            "b5129cd1de164eb9cbd083e8a2503c4e";
        Assert.Equal(expected, Convert.ToHexStringLower(block));
    }

    // RFC 8439 §2.4.2: Example and Test Vector for the ChaCha20 Cipher ("sunscreen").
    [Fact]
    public void Rfc8439_2_4_2_Encryption()
    {
        byte[] nonce = Convert.FromHexString("000000000000004a00000000");
        byte[] plaintext = System.Text.Encoding.ASCII.GetBytes(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.");
        Assert.Equal(114, plaintext.Length);
        string expected =
            "6e2e359a2568f98041ba0728dd0d6981" +
            "e97e7aec1d4360c20a27afccfd9fae0b" +
            "f91b65c5524733ab8f593dabcd62b357" +
            "1639d624e65152ab8f530c359f0861d8" +
            "07ca0dbf500d6a6156a38e088a22b65e" +
            "52bc514d16ccf806818ce91ab7793736" +
            "5af90bbf74a35be6b40b8eedf2785e42" +
            "874d";
        byte[] ciphertext = new byte[plaintext.Length];
        ChaCha20Block.Xor(Key0To31(), 1, nonce, plaintext, ciphertext);
        Assert.Equal(expected, Convert.ToHexStringLower(ciphertext));

        // In place, and decryption is the same operation.
        ChaCha20Block.Xor(Key0To31(), 1, nonce, ciphertext, ciphertext);
        Assert.Equal(plaintext, ciphertext);
    }

    // RFC 8439 §2.4.2 keystream: the first 5 bytes are what header protection would use for this counter/nonce.
    [Fact]
    public void Rfc8439_2_4_2_KeystreamPrefix()
    {
        byte[] nonce = Convert.FromHexString("000000000000004a00000000");
        byte[] block = new byte[64];
        ChaCha20Block.Compute(Key0To31(), 1, nonce, block);
        Assert.Equal("224f51f3401bd9e12fde276fb8631ded8c131f823d2c06e27e4fcaec9ef3cf788a3b0aa372600a92b57974cded2b9334794cba40c63e34cdea212c4cf07d41b7",
            Convert.ToHexStringLower(block));
    }

    [Fact]
    public void RejectsBadLengths()
    {
        byte[] block = new byte[64];
        Assert.Throws<ArgumentException>(() => ChaCha20Block.Compute(new byte[31], 0, new byte[12], block));
        Assert.Throws<ArgumentException>(() => ChaCha20Block.Compute(new byte[32], 0, new byte[11], block));
        Assert.Throws<ArgumentException>(() => ChaCha20Block.Compute(new byte[32], 0, new byte[12], new byte[63]));
        Assert.Throws<ArgumentException>(() => ChaCha20Block.Xor(new byte[32], uint.MaxValue, new byte[12], new byte[65], new byte[65]));
    }
}
