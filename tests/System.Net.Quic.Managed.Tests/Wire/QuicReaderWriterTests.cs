using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class QuicReaderWriterTests
{
    [Fact]
    public void ReaderReadsBigEndianAndStopsAtTheEnd()
    {
        var reader = new QuicReader(Convert.FromHexString("0102030405060708"));
        Assert.True(reader.TryReadByte(out byte b));
        Assert.Equal(1, b);
        Assert.True(reader.TryReadUInt16(out ushort s));
        Assert.Equal(0x0203, s);
        Assert.True(reader.TryReadUInt32(out uint u));
        Assert.Equal(0x04050607u, u);
        Assert.Equal(1, reader.Remaining);
        Assert.False(reader.TryReadUInt16(out _));
        Assert.False(reader.TryReadUInt32(out _));
        Assert.False(reader.TryReadUInt64(out _));
        Assert.False(reader.TryReadBytes(2, out _));
        Assert.False(reader.TryReadBytes(-1, out _));
        Assert.False(reader.TrySkip(2));
        Assert.Equal(7, reader.Position);
        Assert.True(reader.TryReadBytes(1, out ReadOnlySpan<byte> last));
        Assert.Equal(8, last[0]);
        Assert.True(reader.IsEmpty);
        Assert.False(reader.TryReadByte(out _));
        Assert.False(reader.TryPeekByte(out _));
    }

    [Fact]
    public void LengthPrefixedReadRejectsLengthsPastTheEndWithoutConsuming()
    {
        // Length 0x3fff..ff (huge) followed by 2 bytes: must fail, never allocate, never move.
        var reader = new QuicReader(Convert.FromHexString("ffffffffffffffff0102"));
        Assert.False(reader.TryReadLengthPrefixed(out _));
        Assert.Equal(0, reader.Position);

        reader = new QuicReader(Convert.FromHexString("020102ff"));
        Assert.True(reader.TryReadLengthPrefixed(out ReadOnlySpan<byte> value));
        Assert.Equal("0102", Convert.ToHexStringLower(value));
        Assert.Equal(1, reader.Remaining);
    }

    [Fact]
    public void WriterRefusesWhatDoesNotFitAndTracksRemaining()
    {
        Span<byte> buffer = stackalloc byte[5];
        var writer = new QuicWriter(buffer);
        Assert.True(writer.TryWriteUInt16(0x0102));
        Assert.Equal(3, writer.Remaining);
        Assert.False(writer.TryWriteUInt32(1));
        Assert.False(writer.TryWriteVarInt(1UL << 40));
        Assert.False(writer.TryWriteLengthPrefixed(new byte[3]));
        Assert.Equal(2, writer.Position);
        Assert.True(writer.TryWriteLengthPrefixed(new byte[] { 9, 9 }));
        Assert.Equal(0, writer.Remaining);
        Assert.False(writer.TryWriteByte(0));
        Assert.Equal("0102020909", Convert.ToHexStringLower(writer.Written));
    }

    [Fact]
    public void ReserveHandsOutPatchableSpace()
    {
        Span<byte> buffer = stackalloc byte[4];
        var writer = new QuicWriter(buffer);
        Assert.True(writer.TryReserve(2, out Span<byte> reserved));
        Assert.True(writer.TryWriteUInt16(0xabcd));
        reserved[0] = 0x11;
        reserved[1] = 0x22;
        Assert.Equal("1122abcd", Convert.ToHexStringLower(buffer));
        Assert.False(writer.TryReserve(1, out _));
    }
}
