using QuicManaged.Http.Qpack;

namespace System.Net.Quic.Managed.Tests.Http3;

public class PrefixedIntegerTests
{
    // RFC 7541 Appendix C.1.1 (10, 5-bit prefix), C.1.2 (1337, 5-bit prefix), C.1.3 (42 at an octet boundary).
    [Theory]
    [InlineData(10UL, 5, "0a")]
    [InlineData(1337UL, 5, "1f9a0a")]
    [InlineData(42UL, 8, "2a")]
    public void Rfc7541AppendixC1(ulong value, int prefixBits, string hex)
    {
        byte[] expected = Convert.FromHexString(hex);
        byte[] buffer = new byte[16];
        int written = PrefixedInteger.Encode(value, prefixBits, 0, buffer);
        Assert.Equal(expected, buffer.AsSpan(0, written).ToArray());

        Assert.Equal(PrefixedIntegerStatus.Done, PrefixedInteger.TryDecode(expected, prefixBits, out ulong decoded, out int consumed));
        Assert.Equal(value, decoded);
        Assert.Equal(expected.Length, consumed);
    }

    [Fact]
    public void FlagBitsAbovePrefix_ArePreservedAndIgnored()
    {
        byte[] buffer = new byte[16];
        int written = PrefixedInteger.Encode(1337, 5, 0xE0, buffer);
        Assert.Equal(new byte[] { 0xff, 0x9a, 0x0a }, buffer.AsSpan(0, written).ToArray());
        Assert.Equal(PrefixedIntegerStatus.Done, PrefixedInteger.TryDecode(buffer.AsSpan(0, written), 5, out ulong value, out _));
        Assert.Equal(1337UL, value);
    }

    [Theory]
    [InlineData(0UL)]
    [InlineData(30UL)]
    [InlineData(31UL)]
    [InlineData(127UL)]
    [InlineData(128UL)]
    [InlineData(16383UL)]
    [InlineData(PrefixedInteger.MaxValue)]
    public void RoundTrip_AllPrefixSizes(ulong value)
    {
        for (int prefix = 1; prefix <= 8; prefix++)
        {
            byte[] buffer = new byte[16];
            int written = PrefixedInteger.Encode(value, prefix, 0, buffer);
            Assert.Equal(PrefixedIntegerStatus.Done, PrefixedInteger.TryDecode(buffer.AsSpan(0, written), prefix, out ulong decoded, out int consumed));
            Assert.Equal(value, decoded);
            Assert.Equal(written, consumed);
        }
    }

    [Fact]
    public void Truncated_IsIncomplete()
    {
        Assert.Equal(PrefixedIntegerStatus.Incomplete, PrefixedInteger.TryDecode([0x1f, 0x9a], 5, out _, out _));
        Assert.Equal(PrefixedIntegerStatus.Incomplete, PrefixedInteger.TryDecode([], 5, out _, out _));
    }

    [Fact]
    public void Oversized_IsOverflow()
    {
        byte[] tooLong = [0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        Assert.Equal(PrefixedIntegerStatus.Overflow, PrefixedInteger.TryDecode(tooLong, 5, out _, out _));
        // 2^62 exactly is one past the limit.
        byte[] buffer = new byte[16];
        int written = PrefixedInteger.Encode(PrefixedInteger.MaxValue + 1, 5, 0, buffer);
        Assert.Equal(PrefixedIntegerStatus.Overflow, PrefixedInteger.TryDecode(buffer.AsSpan(0, written), 5, out _, out _));
    }
}
