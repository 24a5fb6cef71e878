using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class PacketNumberTests
{
    // RFC 9000 Appendix A.2 / §17.1 examples.
    [Theory]
    [InlineData(0xac5c02L, 0xabe8b3L, 2)]
    [InlineData(0xace8feL, 0xabe8b3L, 3)]
    public void Rfc9000_A2_EncodedLength(long packetNumber, long largestAcknowledged, int expected)
    {
        Assert.Equal(expected, PacketNumber.GetEncodedLength(packetNumber, largestAcknowledged));
    }

    // RFC 9000 Appendix A.3 / §17.1: 0x9b32 after 0xa82f30ea decodes to 0xa82f9b32.
    [Fact]
    public void Rfc9000_A3_Decode()
    {
        Assert.Equal(0xa82f9b32L, PacketNumber.Decode(0xa82f30eaL, 0x9b32, 2));
    }

    [Theory]
    [InlineData(-1L, 0L, 1)]
    [InlineData(-1L, 127L, 1)]
    [InlineData(-1L, 128L, 2)]
    [InlineData(10L, 138L, 1)]
    [InlineData(10L, 139L, 2)]
    [InlineData(0L, 32768L, 2)]
    [InlineData(0L, 32769L, 3)]
    [InlineData(0L, 1L << 23, 3)]
    [InlineData(0L, (1L << 23) + 1, 4)]
    public void EncodedLengthThresholds(long largestAcknowledged, long packetNumber, int expected)
    {
        Assert.Equal(expected, PacketNumber.GetEncodedLength(packetNumber, largestAcknowledged));
    }

    [Fact]
    public void DecodeNearZeroDoesNotWrapNegative()
    {
        Assert.Equal(0, PacketNumber.Decode(-1, 0, 1));
        Assert.Equal(255, PacketNumber.Decode(-1, 0xff, 1));
        Assert.Equal(1, PacketNumber.Decode(0, 1, 4));
    }

    [Fact]
    public void DecodeNearTheTopDoesNotExceedTheMaximum()
    {
        long largest = PacketNumber.MaxValue - 1;
        long decoded = PacketNumber.Decode(largest, (uint)(PacketNumber.MaxValue & 0xff), 1);
        Assert.Equal(PacketNumber.MaxValue, decoded);
    }

    [Fact]
    public void WriteTruncatesToTheLowBytes()
    {
        Span<byte> buffer = stackalloc byte[4];
        var writer = new QuicWriter(buffer);
        Assert.True(PacketNumber.TryWrite(ref writer, 0xa82f9b32L, 2));
        Assert.Equal("9b32", Convert.ToHexStringLower(writer.Written));
        Assert.Equal(0x9b32u, PacketNumber.ReadTruncated(writer.Written));
        Assert.False(PacketNumber.TryWrite(ref writer, 1, 5));
        Assert.False(PacketNumber.TryWrite(ref writer, 1, 3));
    }

    // Encoding with the sender's largest acknowledged and decoding with any receiver state at or above it (and below
    // the packet) recovers the packet number.
    [Fact]
    public void RandomRoundTrips()
    {
        var random = new Random(17);
        Span<byte> buffer = stackalloc byte[4];
        for (int i = 0; i < 50000; i++)
        {
            long largestAcked = random.Next(4) == 0 ? -1 : random.NextInt64(0, 1L << random.Next(1, 62));
            long gap = random.NextInt64(1, 1L << random.Next(1, 31));
            long packetNumber = largestAcked + gap;
            if (packetNumber > PacketNumber.MaxValue)
            {
                continue;
            }

            int length = PacketNumber.GetEncodedLength(packetNumber, largestAcked);
            var writer = new QuicWriter(buffer);
            Assert.True(PacketNumber.TryWrite(ref writer, packetNumber, length));
            uint truncated = PacketNumber.ReadTruncated(writer.Written);

            long receiverLargest = largestAcked + random.NextInt64(0, packetNumber - largestAcked);
            Assert.Equal(packetNumber, PacketNumber.Decode(receiverLargest, truncated, length));
        }
    }
}
