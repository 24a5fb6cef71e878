using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace System.Net.Quic.Managed.Tests.Http3;

public class QpackCodecTests
{
    private static List<HeaderField> Decode(byte[] section, long max = 64 * 1024)
    {
        List<HeaderField> fields = new();
        Http3ErrorCode error = QpackDecoder.Decode(section, max, fields, out string? reason);
        Assert.True(error == Http3ErrorCode.NoError, reason);
        return fields;
    }

    private static Http3ErrorCode DecodeError(byte[] section, long max = 64 * 1024)
        => QpackDecoder.Decode(section, max, new List<HeaderField>(), out _);

    [Fact]
    public void RoundTrip_StaticExactNameRefAndLiteralName()
    {
        List<HeaderField> fields =
        [
            new(":method", "GET"),                    // exact static match
            new(":scheme", "https"),
            new(":authority", "www.example.com"),     // static name reference
            new(":path", "/index.html"),
            new("x-custom-header", "some value"),     // literal name
            new("user-agent", ""),
            new("x-raw", "\u00ff\u00fe\u0001"),       // Huffman would be longer: sent raw
        ];
        byte[] section = QpackEncoder.Encode(fields);
        Assert.Equal(fields, Decode(section));
    }

    [Theory]
    [InlineData(long.MaxValue)]       // no limit (what Http3Settings holds when the peer sends none): once overflowed to a negative buffer size
    [InlineData(int.MaxValue + 1L)]
    [InlineData(64 * 1024L)]
    public void Decode_HuffmanString_UnderAnyFieldSectionLimit(long max)
    {
        // Found by the qpack fuzz target: RFC 9204 B.1's ":path /index.html", re-encoded with Huffman, failed to
        // decode when the limit was long.MaxValue (the decode buffer's size overflowed).
        List<HeaderField> fields = [new(":path", "/index.html"), new("x-custom", "some value")];
        Assert.Equal(fields, Decode(QpackEncoder.Encode(fields), max));
    }

    [Fact]
    public void Encode_UsesExpectedRepresentations()
    {
        // :method GET = static index 17 -> Indexed Field Line 11 010001 = 0xd1 (RFC 9204 §4.5.2).
        byte[] section = QpackEncoder.Encode([new(":method", "GET")]);
        Assert.Equal(new byte[] { 0x00, 0x00, 0xd1 }, section);

        // :authority (index 0) + Huffman "www.example.com": 0101 0000, then H=1 length 12 (0x8c) and the RFC 7541 C.4.1 bytes.
        section = QpackEncoder.Encode([new(":authority", "www.example.com")]);
        Assert.Equal(Convert.FromHexString("0000508cf1e3c2e5f23a6ba0ab90f4ff"), section);
    }

    [Fact]
    public void Decode_RequiredInsertCountNonZero_IsDecompressionFailed()
    {
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError([0x01, 0x00, 0xd1]));
    }

    [Theory]
    [InlineData(new byte[] { 0x00, 0x00, 0x80 })]          // Indexed Field Line, T=0: dynamic index 0
    [InlineData(new byte[] { 0x00, 0x00, 0x40, 0x00 })]    // Literal with name reference, T=0
    [InlineData(new byte[] { 0x00, 0x00, 0x10 })]          // Indexed Field Line with post-base index
    [InlineData(new byte[] { 0x00, 0x00, 0x00, 0x00 })]    // Literal with post-base name reference
    public void Decode_DynamicReference_IsDecompressionFailed(byte[] section)
    {
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError(section));
    }

    [Fact]
    public void Decode_StaticIndexOutOfRange_IsDecompressionFailed()
    {
        // Indexed static 99 = 11 111111 + (99 - 63 = 36).
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError([0x00, 0x00, 0xff, 36]));
        Assert.Equal(new HeaderField("x-frame-options", "sameorigin"), Decode([0x00, 0x00, 0xff, 35])[0]);
    }

    [Fact]
    public void Decode_BadHuffman_IsDecompressionFailed()
    {
        // Literal with name ref :authority, H=1 length 4 of 0xff (contains EOS).
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError([0x00, 0x00, 0x50, 0x84, 0xff, 0xff, 0xff, 0xff]));
        // H=1 length 1: 'a' followed by zero padding.
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError([0x00, 0x00, 0x50, 0x81, 0x18]));
    }

    [Fact]
    public void Decode_Truncated_IsDecompressionFailed()
    {
        byte[] section = QpackEncoder.Encode([new(":authority", "www.example.com"), new("x-custom", "value")]);
        for (int length = 0; length < section.Length; length++)
        {
            List<HeaderField> fields = new();
            Http3ErrorCode error = QpackDecoder.Decode(section.AsSpan(0, length), 1 << 16, fields, out _);
            // Cut exactly between lines is a valid shorter section; every other cut must be rejected.
            if (error == Http3ErrorCode.NoError)
            {
                Assert.True(length >= 2);
                Assert.True(fields.Count < 2);
            }
            else
            {
                Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, error);
            }
        }

        // Length claims more bytes than present: no allocation of the claimed size, just an error.
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, DecodeError([0x00, 0x00, 0x50, 0x7f, 0xff, 0xff, 0xff, 0x0f]));
    }

    [Fact]
    public void Decode_FieldSectionLimit_IsEnforced()
    {
        List<HeaderField> fields = [new("x-long", new string('v', 1000))];
        byte[] section = QpackEncoder.Encode(fields);
        Assert.Equal(Http3ErrorCode.ExcessiveLoad, DecodeError(section, max: 1000));
        Assert.Equal(fields, Decode(section, max: 1000 + 6 + 32));
        Assert.Equal(Http3ErrorCode.ExcessiveLoad, DecodeError(section, max: 1000 + 6 + 31));
    }
}
