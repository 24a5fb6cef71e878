using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class VariableLengthIntegerTests
{
    // RFC 9000 Appendix A.1 sample decodings.
    [Theory]
    [InlineData("c2197c5eff14e88c", 151288809941952652UL, 8)]
    [InlineData("9d7f3e7d", 494878333UL, 4)]
    [InlineData("7bbd", 15293UL, 2)]
    [InlineData("25", 37UL, 1)]
    [InlineData("4025", 37UL, 2)]
    public void Rfc9000_A1_Decodes(string hex, ulong expected, int expectedLength)
    {
        byte[] bytes = Convert.FromHexString(hex);
        Assert.True(VariableLengthInteger.TryRead(bytes, out ulong value, out int length));
        Assert.Equal(expected, value);
        Assert.Equal(expectedLength, length);

        var reader = new QuicReader(bytes);
        Assert.True(reader.TryReadVarInt(out ulong viaReader));
        Assert.Equal(expected, viaReader);
        Assert.True(reader.IsEmpty);
    }

    // The minimal encodings of the A.1 values are the A.1 byte strings (0x4025 is the non-minimal one).
    [Theory]
    [InlineData(151288809941952652UL, "c2197c5eff14e88c")]
    [InlineData(494878333UL, "9d7f3e7d")]
    [InlineData(15293UL, "7bbd")]
    [InlineData(37UL, "25")]
    public void Rfc9000_A1_Encodes(ulong value, string expectedHex)
    {
        Span<byte> buffer = stackalloc byte[8];
        Assert.True(VariableLengthInteger.TryWrite(buffer, value, out int written));
        Assert.Equal(expectedHex, Convert.ToHexStringLower(buffer.Slice(0, written)));
    }

    [Fact]
    public void NonMinimalEncodingIsWrittenOnRequest()
    {
        Span<byte> buffer = stackalloc byte[2];
        Assert.True(VariableLengthInteger.TryWrite(buffer, 37, 2));
        Assert.Equal("4025", Convert.ToHexStringLower(buffer));
    }

    [Theory]
    [InlineData(0UL, 1)]
    [InlineData(63UL, 1)]
    [InlineData(64UL, 2)]
    [InlineData(16383UL, 2)]
    [InlineData(16384UL, 4)]
    [InlineData(1073741823UL, 4)]
    [InlineData(1073741824UL, 8)]
    [InlineData(4611686018427387903UL, 8)]
    [InlineData(4611686018427387904UL, 0)]
    [InlineData(ulong.MaxValue, 0)]
    public void EncodedLengthBoundaries(ulong value, int expected)
    {
        Assert.Equal(expected, VariableLengthInteger.GetEncodedLength(value));
        Span<byte> buffer = stackalloc byte[8];
        Assert.Equal(expected != 0, VariableLengthInteger.TryWrite(buffer, value, out int written));
        Assert.Equal(expected, written);
    }

    [Fact]
    public void ValueTooLargeForRequestedLengthIsRefused()
    {
        Span<byte> buffer = stackalloc byte[8];
        Assert.False(VariableLengthInteger.TryWrite(buffer, 64, 1));
        Assert.False(VariableLengthInteger.TryWrite(buffer, 1, 3));
        Assert.False(VariableLengthInteger.TryWrite(buffer.Slice(0, 3), 1, 4));
    }

    [Fact]
    public void ShortInputFailsWithoutConsuming()
    {
        var reader = new QuicReader(Convert.FromHexString("c2197c5eff14e8"));
        Assert.False(reader.TryReadVarInt(out _));
        Assert.Equal(0, reader.Position);
        Assert.False(VariableLengthInteger.TryRead(ReadOnlySpan<byte>.Empty, out _, out _));
    }

    [Fact]
    public void RandomRoundTripsAtEveryLength()
    {
        var random = new Random(9000);
        Span<byte> buffer = stackalloc byte[8];
        for (int i = 0; i < 20000; i++)
        {
            ulong value = (ulong)random.NextInt64() >> random.Next(2, 64);
            foreach (int length in new[] { 1, 2, 4, 8 })
            {
                bool fits = value <= VariableLengthInteger.GetMaxValueForLength(length);
                Assert.Equal(fits, VariableLengthInteger.TryWrite(buffer, value, length));
                if (fits)
                {
                    Assert.True(VariableLengthInteger.TryRead(buffer, out ulong decoded, out int read));
                    Assert.Equal(value, decoded);
                    Assert.Equal(length, read);
                }
            }
        }
    }
}
