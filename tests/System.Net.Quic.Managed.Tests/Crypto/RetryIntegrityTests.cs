using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using static QuicManaged.Tools.DatagramDumper.Rfc9001Vectors;

namespace System.Net.Quic.Managed.Tests.Crypto;

public class RetryIntegrityTests
{
    // RFC 9001 A.4 and RFC 9369 A.4: the last 16 bytes are the Retry Integrity Tag over ODCID 0x8394c8f03e515708.
    [Theory]
    [InlineData(QuicVersion.V1, V1Retry)]
    [InlineData(QuicVersion.V2, V2Retry)]
    public void A4_ComputeTag(uint version, string retryHex)
    {
        byte[] retry = Hex(retryHex);
        Span<byte> tag = stackalloc byte[16];
        Assert.True(RetryIntegrity.TryComputeTag(version, Hex(ClientDcid), retry.AsSpan(0, retry.Length - 16), tag));
        Assert.Equal(Convert.ToHexStringLower(retry.AsSpan(retry.Length - 16)), Convert.ToHexStringLower(tag));
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1Retry)]
    [InlineData(QuicVersion.V2, V2Retry)]
    public void A4_Verify(uint version, string retryHex)
    {
        byte[] retry = Hex(retryHex);
        Assert.True(RetryIntegrity.Verify(version, Hex(ClientDcid), retry));
    }

    [Theory]
    [InlineData(QuicVersion.V1, V1Retry)]
    [InlineData(QuicVersion.V2, V2Retry)]
    public void A4_AnyFlippedBit_FailsVerification(uint version, string retryHex)
    {
        byte[] retry = Hex(retryHex);
        for (int bit = 0; bit < retry.Length * 8; bit++)
        {
            byte[] copy = (byte[])retry.Clone();
            copy[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.False(RetryIntegrity.Verify(version, Hex(ClientDcid), copy), $"bit {bit}");
        }
        byte[] odcid = Hex(ClientDcid);
        for (int bit = 0; bit < odcid.Length * 8; bit++)
        {
            byte[] copy = (byte[])odcid.Clone();
            copy[bit / 8] ^= (byte)(1 << (bit % 8));
            Assert.False(RetryIntegrity.Verify(version, copy, retry), $"odcid bit {bit}");
        }
    }

    [Fact]
    public void WrongVersion_FailsVerification()
    {
        Assert.False(RetryIntegrity.Verify(QuicVersion.V2, Hex(ClientDcid), Hex(V1Retry)));
        Assert.False(RetryIntegrity.Verify(QuicVersion.V1, Hex(ClientDcid), Hex(V2Retry)));
        Assert.False(RetryIntegrity.Verify(0xff00001d, Hex(ClientDcid), Hex(V1Retry)));
    }

    [Fact]
    public void MalformedInputs_ReturnFalse()
    {
        Assert.False(RetryIntegrity.Verify(QuicVersion.V1, Hex(ClientDcid), ReadOnlySpan<byte>.Empty));
        Assert.False(RetryIntegrity.Verify(QuicVersion.V1, Hex(ClientDcid), new byte[16]));
        Assert.False(RetryIntegrity.Verify(QuicVersion.V1, new byte[21], Hex(V1Retry)));
        Span<byte> shortTag = stackalloc byte[15];
        Assert.False(RetryIntegrity.TryComputeTag(QuicVersion.V1, Hex(ClientDcid), Hex(V1Retry), shortTag));
    }

    [Fact]
    public void LongToken_UsesPooledBuffer_AndRoundTrips()
    {
        // A Retry whose token pushes the pseudo-packet past the stack buffer.
        byte[] retry = new byte[2000 + 16];
        var rng = new Random(9001);
        rng.NextBytes(retry);
        retry[0] = 0xff;
        Span<byte> tag = retry.AsSpan(retry.Length - 16);
        Assert.True(RetryIntegrity.TryComputeTag(QuicVersion.V1, Hex(ClientDcid), retry.AsSpan(0, retry.Length - 16), tag));
        Assert.True(RetryIntegrity.Verify(QuicVersion.V1, Hex(ClientDcid), retry));
        retry[1500] ^= 1;
        Assert.False(RetryIntegrity.Verify(QuicVersion.V1, Hex(ClientDcid), retry));
    }
}
