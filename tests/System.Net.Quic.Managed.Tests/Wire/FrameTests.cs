using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class FrameTests
{
    // RFC 9001 Appendix A.3: the server Initial payload is an ACK of packet 0 followed by a 90-byte CRYPTO frame.
    private const string Rfc9001ServerInitialPayload =
        "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739" +
        "88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94" +
        "0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00" +
        "020304";

    private static readonly byte[] Token16 = Convert.FromHexString("00112233445566778899aabbccddeeff");

    [Fact]
    public void Rfc9001ServerInitialPayloadDecodes()
    {
        byte[] payload = Convert.FromHexString(Rfc9001ServerInitialPayload);
        Assert.Equal(99, payload.Length);
        var reader = new QuicReader(payload);

        Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out FrameType type));
        Assert.Equal(FrameType.Ack, type);
        Assert.Equal(TransportErrorCode.NoError, AckFrame.TryRead(ref reader, type, out AckFrame ack));
        Assert.Equal(0UL, ack.LargestAcknowledged);
        Assert.Equal(0UL, ack.AckDelay);
        Assert.Equal(1, ack.RangeCount);
        Assert.Null(ack.EcnCounts);
        Assert.Equal(5, ack.EncodedLength);

        Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out type));
        Assert.Equal(FrameType.Crypto, type);
        Assert.Equal(TransportErrorCode.NoError, CryptoFrame.TryRead(ref reader, out CryptoFrame crypto));
        Assert.Equal(0UL, crypto.Offset);
        Assert.Equal(90, crypto.Data.Length);
        Assert.Equal(0x02, crypto.Data[0]); // TLS ServerHello
        Assert.True(reader.IsEmpty);
    }

    public static TheoryData<string> EveryFrame() => new()
    {
        "00000000",
        "01",
        "1e",
        "0224050003", // ACK largest 36, delay 5, 1 range [33..36]
        "03240502030102000a0b0c0d", // ACK_ECN: [33..36] [28..30] [16..26], ECN 11/12/13
        "0404400005", // RESET_STREAM
        "054004c0000000000000ff", // STOP_SENDING (non-minimal varints are legal here)
        "060a03616263", // CRYPTO
        "070474657374", // NEW_TOKEN
        "080400", // STREAM no offset, no length: data to the end
        "0b04020102", // STREAM LEN|FIN
        "0f044010030a0b0c", // STREAM OFF|LEN|FIN
        "0c0410aabb", // STREAM OFF, data to the end
        "1080ffffff",
        "110122",
        "1201",
        "13c0000000000000ff",
        "1433",
        "150133",
        "1600",
        "1710",
        "18050304a1a2a3a400112233445566778899aabbccddeeff",
        "1907",
        "1a0102030405060708",
        "1b0102030405060708",
        "1c0a060568656c6c6f",
        "1d40640100",
        "30cafe",
        "3103010203",
    };

    [Theory]
    [MemberData(nameof(EveryFrame))]
    public void EveryFrameTypeRoundTrips(string hex)
    {
        byte[] encoded = Convert.FromHexString(hex);
        var first = new List<string>();
        byte[] reencoded = new byte[encoded.Length + 16];
        Assert.Equal(TransportErrorCode.NoError, FrameTestCodec.DecodeAll(encoded, reencoded, out int length, first));
        Assert.Single(first);

        var second = new List<string>();
        byte[] again = new byte[length + 16];
        Assert.Equal(TransportErrorCode.NoError, FrameTestCodec.DecodeAll(reencoded.AsSpan(0, length), again, out int length2, second));
        Assert.Equal(first, second);
        Assert.Equal(reencoded.AsSpan(0, length).ToArray(), again.AsSpan(0, length2).ToArray());
        Assert.True(length <= encoded.Length);
    }

    [Fact]
    public void AllFrameTypesAreCoveredByTheRoundTripSet()
    {
        var covered = new HashSet<FrameType>();
        foreach (var row in EveryFrame())
        {
            var reader = new QuicReader(Convert.FromHexString(row));
            Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out FrameType type));
            covered.Add(FrameTypes.IsStream(type) ? FrameType.Stream : type);
        }

        foreach (FrameType type in Enum.GetValues<FrameType>())
        {
            if (type != FrameType.StreamMax)
            {
                Assert.Contains(type, covered);
            }
        }
    }

    [Fact]
    public void StreamFrameFieldsAndHelpers()
    {
        byte[] data = [1, 2, 3, 4, 5];
        var frame = new StreamFrame(4, 1000, data, fin: true);
        byte[] buffer = new byte[64];
        var writer = new QuicWriter(buffer);
        Assert.True(frame.TryWrite(ref writer));
        Assert.Equal(frame.EncodedLength, writer.Position);
        Assert.Equal(0x0f, buffer[0]);

        var reader = new QuicReader(writer.Written);
        Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out FrameType type));
        Assert.Equal(TransportErrorCode.NoError, StreamFrame.TryRead(ref reader, type, out StreamFrame decoded));
        Assert.Equal(4UL, decoded.StreamId);
        Assert.Equal(1000UL, decoded.Offset);
        Assert.True(decoded.Fin);
        Assert.Equal(data, decoded.Data.ToArray());

        // Zero offset omits the OFF bit and field.
        Assert.Equal(1 + 1 + 1, StreamFrame.GetHeaderLength(0, 0, 5, hasLength: true));
        var small = new QuicWriter(new byte[8]);
        Assert.False(new StreamFrame(0, 0, new byte[8], false).TryWrite(ref small));
        Assert.Equal(0, small.Position);
    }

    [Theory]
    [InlineData(100, 4UL, 0UL, true, 96)] // 97 would need a 2-byte length: 99 bytes of 98
    [InlineData(100, 4UL, 0UL, false, 98)]
    [InlineData(1200, 4UL, 70000UL, true, 1200 - 1 - 1 - 4 - 2)]
    [InlineData(66, 0UL, 0UL, true, 63)]
    [InlineData(67, 0UL, 0UL, true, 63)]
    [InlineData(68, 0UL, 0UL, true, 64)]
    [InlineData(2, 0UL, 0UL, true, -1)]
    public void StreamMaxDataLengthFitsExactly(int available, ulong streamId, ulong offset, bool hasLength, int expected)
    {
        int max = StreamFrame.GetMaxDataLength(available, streamId, offset, hasLength);
        Assert.Equal(expected, max);
        if (max >= 0)
        {
            Assert.True(StreamFrame.GetHeaderLength(streamId, offset, max, hasLength) + max <= available);
        }
    }

    [Fact]
    public void CryptoMaxDataLengthFits()
    {
        for (int available = 0; available < 20000; available += 7)
        {
            int max = CryptoFrame.GetMaxDataLength(available, 12345);
            if (max >= 0)
            {
                Assert.True(CryptoFrame.GetHeaderLength(12345, max) + max <= available);
                Assert.True(CryptoFrame.GetHeaderLength(12345, max + 1) + max + 1 > available);
            }
        }
    }

    [Theory]
    [InlineData("0e", (int)TransportErrorCode.FrameEncodingError)] // STREAM OFF|LEN truncated
    [InlineData("0a0005", (int)TransportErrorCode.FrameEncodingError)] // STREAM length past the end
    [InlineData("0c00ffffffffffffffff01", (int)TransportErrorCode.FrameEncodingError)] // offset 2^62-1 + 1 byte
    [InlineData("06ffffffffffffffff0101", (int)TransportErrorCode.FrameEncodingError)] // CRYPTO beyond 2^62-1
    [InlineData("0700", (int)TransportErrorCode.FrameEncodingError)] // empty NEW_TOKEN
    [InlineData("12d000000000000001", (int)TransportErrorCode.FrameEncodingError)] // MAX_STREAMS 2^60+1
    [InlineData("17d000000000000001", (int)TransportErrorCode.FrameEncodingError)] // STREAMS_BLOCKED 2^60+1
    [InlineData("18010200", (int)TransportErrorCode.FrameEncodingError)] // NEW_CONNECTION_ID retire_prior_to > sequence
    [InlineData("1801000000112233445566778899aabbccddeeff", (int)TransportErrorCode.FrameEncodingError)] // zero-length CID
    [InlineData("18010015", (int)TransportErrorCode.FrameEncodingError)] // 21-byte CID
    [InlineData("1a01020304", (int)TransportErrorCode.FrameEncodingError)] // PATH_CHALLENGE short
    [InlineData("1c0a0605686565", (int)TransportErrorCode.FrameEncodingError)] // reason past the end
    [InlineData("310501", (int)TransportErrorCode.FrameEncodingError)] // DATAGRAM length past the end
    [InlineData("1f", (int)TransportErrorCode.FrameEncodingError)] // unknown type
    [InlineData("4021", (int)TransportErrorCode.FrameEncodingError)] // unknown type 0x21
    [InlineData("4001", (int)TransportErrorCode.ProtocolViolation)] // PING with a 2-byte type
    [InlineData("40", (int)TransportErrorCode.FrameEncodingError)] // truncated type
    [InlineData("020a000105", (int)TransportErrorCode.FrameEncodingError)] // first ACK range larger than largest
    [InlineData("020a0001050303", (int)TransportErrorCode.FrameEncodingError)] // ACK range below 0 after a gap
    [InlineData("020a0001090000", (int)TransportErrorCode.FrameEncodingError)] // ACK gap below 0: smallest 1, next largest -1
    [InlineData("020a0001030006", (int)TransportErrorCode.FrameEncodingError)] // ACK range below 0: [7..10], then largest 5 with range 6
    [InlineData("020a00020100", (int)TransportErrorCode.FrameEncodingError)] // ACK range count beyond the data
    [InlineData("030a00000000", (int)TransportErrorCode.FrameEncodingError)] // ACK_ECN without counts
    public void MalformedFramesGiveTypedErrors(string hex, int expectedCode)
    {
        var descriptions = new List<string>();
        byte[] payload = Convert.FromHexString(hex);
        Assert.Equal((TransportErrorCode)(ulong)expectedCode, FrameTestCodec.DecodeAll(payload, new byte[256], out _, descriptions));
        Assert.Empty(descriptions);
    }

    [Fact]
    public void AckRangeExactlyReachingZeroIsValid()
    {
        // Largest 10, first range 2 -> [8..10]; gap 0 -> next largest 6; range 6 -> [0..6].
        byte[] payload = Convert.FromHexString("020a0001020006");
        var reader = new QuicReader(payload);
        Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out FrameType type));
        Assert.Equal(TransportErrorCode.NoError, AckFrame.TryRead(ref reader, type, out AckFrame ack));
        Span<AckRange> ranges = stackalloc AckRange[4];
        Assert.Equal(2, ack.CopyRangesTo(ranges));
        Assert.Equal(new AckRange(8, 10), ranges[0]);
        Assert.Equal(new AckRange(0, 6), ranges[1]);
        Assert.Equal(0L, ack.SmallestAcknowledged);

        reader = Reader("0a0001020007");
        Assert.Equal(TransportErrorCode.FrameEncodingError, AckFrame.TryRead(ref reader, FrameType.Ack, out _));
    }

    [Fact]
    public void AckWriterRejectsOverlappingOrAdjacentRanges()
    {
        var writer = new QuicWriter(new byte[64]);
        Assert.False(AckFrame.TryWrite(ref writer, new[] { new AckRange(5, 10), new AckRange(3, 4) }, 0));
        Assert.False(AckFrame.TryWrite(ref writer, new[] { new AckRange(5, 10), new AckRange(3, 6) }, 0));
        Assert.False(AckFrame.TryWrite(ref writer, new[] { new AckRange(3, 4), new AckRange(5, 10) }, 0));
        Assert.False(AckFrame.TryWrite(ref writer, new[] { new AckRange(11, 10) }, 0));
        Assert.False(AckFrame.TryWrite(ref writer, new[] { new AckRange(-1, 10) }, 0));
        Assert.False(AckFrame.TryWrite(ref writer, Array.Empty<AckRange>(), 0));
        Assert.Equal(0, writer.Position);
        Assert.True(AckFrame.TryWrite(ref writer, new[] { new AckRange(5, 10), new AckRange(0, 3) }, 7, new EcnCounts(1, 2, 3)));
        Assert.Equal("030a0701050003010203", Convert.ToHexStringLower(writer.Written));
    }

    [Fact]
    public void AckWriterRandomRoundTrips()
    {
        var random = new Random(3);
        var ranges = new List<AckRange>();
        byte[] buffer = new byte[4096];
        Span<AckRange> decodedRanges = new AckRange[300];
        for (int iteration = 0; iteration < 3000; iteration++)
        {
            ranges.Clear();
            ulong next = (ulong)random.NextInt64(0, 1L << random.Next(1, 62));
            int count = random.Next(1, 200);
            for (int i = 0; i < count; i++)
            {
                ulong length = Math.Min((ulong)random.Next(0, 100), next);
                if (next < length)
                {
                    break;
                }

                ranges.Add(new AckRange((long)(next - length), (long)next));
                ulong gap = (ulong)random.Next(2, 1000);
                if (next - length < gap)
                {
                    break;
                }

                next = next - length - gap;
            }

            var writer = new QuicWriter(buffer);
            EcnCounts? ecn = random.Next(2) == 0 ? null : new EcnCounts(random.Next(), 0, 1);
            ulong delay = (ulong)random.Next();
            Assert.True(AckFrame.TryWrite(ref writer, ranges.ToArray(), delay, ecn));
            Assert.Equal(AckFrame.GetEncodedLength(ranges.ToArray(), delay, ecn), writer.Position);

            var reader = new QuicReader(writer.Written);
            Assert.Equal(TransportErrorCode.NoError, FrameTypes.TryRead(ref reader, out FrameType type));
            Assert.Equal(TransportErrorCode.NoError, AckFrame.TryRead(ref reader, type, out AckFrame ack));
            Assert.True(reader.IsEmpty);
            Assert.Equal(ranges.Count, ack.CopyRangesTo(decodedRanges));
            Assert.Equal(ranges.ToArray(), decodedRanges.Slice(0, ranges.Count).ToArray());
            Assert.Equal(ecn, ack.EcnCounts);
            Assert.Equal(delay, ack.AckDelay);
            Assert.Equal(writer.Position, ack.EncodedLength);
        }
    }

    [Fact]
    public void AckDelayScalesByTheExponentAndSaturates()
    {
        var reader = Reader("0a" + "4064" + "0000"); // largest 10, ACK Delay 100, no extra ranges, first range 0
        Assert.Equal(TransportErrorCode.NoError, AckFrame.TryRead(ref reader, FrameType.Ack, out AckFrame ack));
        Assert.Equal(800UL, ack.GetAckDelayUs(3));
        Assert.Equal(100UL << 20, ack.GetAckDelayUs(20));
        Assert.Equal(100UL, AckFrame.EncodeAckDelay(800, 3));
        Assert.Equal(0UL, AckFrame.EncodeAckDelay(-5, 3));

        reader = Reader("0a" + "ffffffffffffffff" + "0000");
        Assert.Equal(TransportErrorCode.NoError, AckFrame.TryRead(ref reader, FrameType.Ack, out ack));
        Assert.Equal(ulong.MaxValue, ack.GetAckDelayUs(20));
    }

    [Fact]
    public void ConnectionCloseFactoriesEncodeTheRightType()
    {
        var writer = new QuicWriter(new byte[64]);
        Assert.True(ConnectionCloseFrame.Transport(TransportErrorCode.ProtocolViolation, FrameType.Stream, "bad"u8).TryWrite(ref writer));
        Assert.Equal("1c0a0803626164", Convert.ToHexStringLower(writer.Written));
        writer = new QuicWriter(new byte[64]);
        var app = ConnectionCloseFrame.Application(0x100, default);
        Assert.Equal(4, app.EncodedLength);
        Assert.True(app.TryWrite(ref writer));
        Assert.Equal("1d410000", Convert.ToHexStringLower(writer.Written));
    }

    [Fact]
    public void DatagramEncodedLength()
    {
        Assert.Equal(1 + 2 + 100, DatagramFrame.GetEncodedLength(100, true));
        Assert.Equal(1 + 100, DatagramFrame.GetEncodedLength(100, false));
    }

    // RFC 9000 §12.4 Table 3, row by row (I = Initial, H = Handshake, 0 = 0-RTT, 1 = 1-RTT).
    [Theory]
    [InlineData(0x00, "IH01")]
    [InlineData(0x01, "IH01")]
    [InlineData(0x02, "IH_1")]
    [InlineData(0x03, "IH_1")]
    [InlineData(0x04, "__01")]
    [InlineData(0x05, "__01")]
    [InlineData(0x06, "IH_1")]
    [InlineData(0x07, "___1")]
    [InlineData(0x08, "__01")]
    [InlineData(0x0f, "__01")]
    [InlineData(0x10, "__01")]
    [InlineData(0x11, "__01")]
    [InlineData(0x12, "__01")]
    [InlineData(0x13, "__01")]
    [InlineData(0x14, "__01")]
    [InlineData(0x15, "__01")]
    [InlineData(0x16, "__01")]
    [InlineData(0x17, "__01")]
    [InlineData(0x18, "__01")]
    [InlineData(0x19, "__01")]
    [InlineData(0x1a, "__01")]
    [InlineData(0x1b, "___1")]
    [InlineData(0x1c, "IH01")]
    [InlineData(0x1d, "__01")]
    [InlineData(0x1e, "___1")]
    [InlineData(0x30, "__01")]
    [InlineData(0x31, "__01")]
    [InlineData(0x1f, "____")]
    public void Table3PacketTypePermissions(int frameType, string row)
    {
        var type = (FrameType)(ulong)frameType;
        Assert.Equal(row[0] == 'I', FrameTypes.IsAllowedIn(type, PacketType.Initial));
        Assert.Equal(row[1] == 'H', FrameTypes.IsAllowedIn(type, PacketType.Handshake));
        Assert.Equal(row[2] == '0', FrameTypes.IsAllowedIn(type, PacketType.ZeroRtt));
        Assert.Equal(row[3] == '1', FrameTypes.IsAllowedIn(type, PacketType.OneRtt));
        Assert.False(FrameTypes.IsAllowedIn(type, PacketType.Retry));
        Assert.Equal(row[0] == 'I' ? TransportErrorCode.NoError : TransportErrorCode.ProtocolViolation, FrameTypes.CheckAllowedIn(type, PacketType.Initial));
    }

    [Fact]
    public void AckElicitingAndProbingClassification()
    {
        Assert.False(FrameTypes.IsAckEliciting(FrameType.Ack));
        Assert.False(FrameTypes.IsAckEliciting(FrameType.Padding));
        Assert.False(FrameTypes.IsAckEliciting(FrameType.ConnectionClose));
        Assert.True(FrameTypes.IsAckEliciting(FrameType.Ping));
        Assert.True(FrameTypes.IsAckEliciting((FrameType)0x0a));
        Assert.True(FrameTypes.IsProbing(FrameType.PathChallenge));
        Assert.False(FrameTypes.IsProbing(FrameType.Ping));
    }

    private static QuicReader Reader(string hex) => new(Convert.FromHexString(hex));
}
