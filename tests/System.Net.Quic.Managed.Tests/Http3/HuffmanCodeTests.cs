using QuicManaged.Http.Qpack;

namespace System.Net.Quic.Managed.Tests.Http3;

public class HuffmanCodeTests
{
    // RFC 7541 Appendix C.4.1-C.4.3 (Request Examples with Huffman Coding): the Huffman string literals
    // inside "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "8286 84be 5886 a8eb 1064 9cbf" and
    // "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf".
    [Theory]
    [InlineData("www.example.com", "f1e3c2e5f23a6ba0ab90f4ff")]
    [InlineData("no-cache", "a8eb10649cbf")]
    [InlineData("custom-key", "25a849e95ba97d7f")]
    [InlineData("custom-value", "25a849e95bb8e8b4bf")]
    public void Rfc7541AppendixC4_EncodeAndDecode(string text, string hex)
    {
        byte[] raw = Text.Encoding.ASCII.GetBytes(text);
        byte[] expected = Convert.FromHexString(hex);

        Assert.Equal(expected.Length, HuffmanCode.GetEncodedLength(raw));
        byte[] encoded = new byte[expected.Length];
        Assert.Equal(expected.Length, HuffmanCode.Encode(raw, encoded));
        Assert.Equal(expected, encoded);

        byte[] decoded = new byte[64];
        Assert.True(HuffmanCode.TryDecode(expected, decoded, out int written));
        Assert.Equal(text, Text.Encoding.ASCII.GetString(decoded, 0, written));
    }

    [Fact]
    public void CodeTable_MatchesRfc7541AppendixBSpotChecks()
    {
        // RFC 7541 Appendix B rows: ' ' |010100 (6), '0' |00000 (5), 'a' |00011 (5), (0) |11111111|11000 (13),
        // (255) |11111111|11111111|11101110 (26), EOS (256) |11111111|11111111|11111111|111111 (30).
        Assert.Equal((0x14u, 6), (HuffmanCode.GetCode(' '), HuffmanCode.GetCodeLength(' ')));
        Assert.Equal((0x0u, 5), (HuffmanCode.GetCode('0'), HuffmanCode.GetCodeLength('0')));
        Assert.Equal((0x3u, 5), (HuffmanCode.GetCode('a'), HuffmanCode.GetCodeLength('a')));
        Assert.Equal((0x1ff8u, 13), (HuffmanCode.GetCode(0), HuffmanCode.GetCodeLength(0)));
        Assert.Equal((0x3ffffeeu, 26), (HuffmanCode.GetCode(255), HuffmanCode.GetCodeLength(255)));
        Assert.Equal((0x3fffffffu, 30), (HuffmanCode.GetCode(256), HuffmanCode.GetCodeLength(256)));
    }

    [Fact]
    public void AllByteValues_RoundTrip()
    {
        byte[] raw = new byte[256];
        for (int i = 0; i < raw.Length; i++)
        {
            raw[i] = (byte)i;
        }

        byte[] encoded = new byte[HuffmanCode.GetEncodedLength(raw)];
        Assert.Equal(encoded.Length, HuffmanCode.Encode(raw, encoded));
        byte[] decoded = new byte[256];
        Assert.True(HuffmanCode.TryDecode(encoded, decoded, out int written));
        Assert.Equal(raw, decoded.AsSpan(0, written).ToArray());
    }

    [Fact]
    public void Decode_RejectsExplicitEos()
    {
        // EOS is 30 ones; 4 bytes of 0xff contain the full EOS code (RFC 7541 §5.2: MUST be a decoding error).
        Assert.False(HuffmanCode.TryDecode([0xff, 0xff, 0xff, 0xff], new byte[16], out _));
    }

    [Fact]
    public void Decode_RejectsPaddingOfEightBitsOrMore()
    {
        // 'a' (00011) then 11 bits of ones: padding longer than 7 bits is an error.
        Assert.False(HuffmanCode.TryDecode([0b0001_1111, 0xff], new byte[16], out _));
        // A whole byte of padding alone is also 8 bits of padding.
        Assert.False(HuffmanCode.TryDecode([0xff], new byte[16], out _));
    }

    [Fact]
    public void Decode_RejectsPaddingThatIsNotEosPrefix()
    {
        // 'a' (00011) followed by padding 000 instead of 111.
        Assert.False(HuffmanCode.TryDecode([0b0001_1000], new byte[16], out _));
        // Valid form for comparison: 'a' + 111.
        Assert.True(HuffmanCode.TryDecode([0b0001_1111], new byte[16], out int written));
        Assert.Equal(1, written);
    }

    [Fact]
    public void Decode_FailsWhenDestinationTooSmall()
    {
        byte[] encoded = Convert.FromHexString("f1e3c2e5f23a6ba0ab90f4ff");
        Assert.False(HuffmanCode.TryDecode(encoded, new byte[5], out _));
    }
}
