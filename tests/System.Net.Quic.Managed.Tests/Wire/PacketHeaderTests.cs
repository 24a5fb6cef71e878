using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

public class PacketHeaderTests
{
    // RFC 9001 Appendix A.2: the start of the protected client Initial (1200 bytes) and its unprotected header.
    private const string Rfc9001ClientProtectedPrefix = "c000000001088394c8f03e5157080000449e7b9aec34";
    private const string Rfc9001ClientUnprotectedHeader = "c300000001088394c8f03e5157080000449e00000002";

    // RFC 9001 Appendix A.3: the server Initial's unprotected header.
    private const string Rfc9001ServerUnprotectedHeader = "c1000000010008f067a5502a4262b50040750001";

    // RFC 9369 Appendix A.2: the v2 client Initial, protected and unprotected headers.
    private const string Rfc9369ClientProtectedHeader = "d76b3343cf088394c8f03e5157080000449ea0c95e82";
    private const string Rfc9369ClientUnprotectedHeader = "d36b3343cf088394c8f03e5157080000449e00000002";

    // RFC 9001 Appendix A.4 and RFC 9369 Appendix A.4: Retry packets (tag last).
    private const string Rfc9001Retry = "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba";
    private const string Rfc9369Retry = "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6";

    private static byte[] Datagram(string prefixHex, int totalLength)
    {
        byte[] datagram = new byte[totalLength];
        Convert.FromHexString(prefixHex).CopyTo(datagram, 0);
        return datagram;
    }

    [Theory]
    [InlineData(Rfc9001ClientProtectedPrefix, QuicVersion.V1)]
    [InlineData(Rfc9001ClientUnprotectedHeader, QuicVersion.V1)]
    [InlineData(Rfc9369ClientProtectedHeader, QuicVersion.V2)]
    [InlineData(Rfc9369ClientUnprotectedHeader, QuicVersion.V2)]
    public void ClientInitialVectorsParse(string prefix, uint version)
    {
        byte[] datagram = Datagram(prefix, 1200);
        Assert.True(LongHeader.TryParse(datagram, out LongHeader header));
        Assert.Equal(PacketType.Initial, header.Type);
        Assert.Equal(version, header.Version);
        Assert.Equal("8394c8f03e515708", Convert.ToHexStringLower(header.DestinationConnectionId));
        Assert.True(header.SourceConnectionId.IsEmpty);
        Assert.True(header.Token.IsEmpty);
        Assert.Equal(1182, header.PayloadLength); // varint 0x449e
        Assert.Equal(18, header.PacketNumberOffset);
        Assert.Equal(1200, header.TotalLength);
    }

    [Fact]
    public void UnprotectedFirstByteGivesPacketNumberLength()
    {
        byte first = Convert.FromHexString(Rfc9001ClientUnprotectedHeader)[0];
        Assert.Equal(4, PacketFirstByte.GetPacketNumberLength(first));
        Assert.True(PacketFirstByte.ReservedBitsAreZero(first));
        Assert.Equal(2u, PacketNumber.ReadTruncated(Convert.FromHexString(Rfc9001ClientUnprotectedHeader).AsSpan(18, 4)));
        Assert.False(PacketFirstByte.ReservedBitsAreZero(0xcc));
        Assert.False(PacketFirstByte.ReservedBitsAreZero(0x58));
    }

    [Fact]
    public void ServerInitialVectorParses()
    {
        // 20 header bytes + Length 0x75 (117) - 2 packet number bytes already counted in the header.
        byte[] datagram = Datagram(Rfc9001ServerUnprotectedHeader, 18 + 117 + 7);
        Assert.True(LongHeader.TryParse(datagram, out LongHeader header));
        Assert.Equal(PacketType.Initial, header.Type);
        Assert.True(header.DestinationConnectionId.IsEmpty);
        Assert.Equal("f067a5502a4262b5", Convert.ToHexStringLower(header.SourceConnectionId));
        Assert.Equal(117, header.PayloadLength);
        Assert.Equal(18, header.PacketNumberOffset);
        Assert.Equal(135, header.TotalLength);
        Assert.Equal(2, PacketFirstByte.GetPacketNumberLength(header.FirstByte));
    }

    [Theory]
    [InlineData(Rfc9001Retry, QuicVersion.V1, "04a265ba2eff4d829058fb3f0f2496ba")]
    [InlineData(Rfc9369Retry, QuicVersion.V2, "c8646ce8bfe33952d955543665dcc7b6")]
    public void RetryVectorsParseAndReencode(string hex, uint version, string tag)
    {
        byte[] packet = Convert.FromHexString(hex);
        Assert.True(RetryPacket.TryParse(packet, out RetryPacket retry));
        Assert.Equal(version, retry.Version);
        Assert.True(retry.DestinationConnectionId.IsEmpty);
        Assert.Equal("f067a5502a4262b5", Convert.ToHexStringLower(retry.SourceConnectionId));
        Assert.Equal("token", System.Text.Encoding.ASCII.GetString(retry.Token));
        Assert.Equal(tag, Convert.ToHexStringLower(retry.IntegrityTag));

        byte[] buffer = new byte[64];
        var writer = new QuicWriter(buffer);
        Assert.True(RetryPacket.TryWriteWithoutTag(ref writer, version, default, retry.SourceConnectionId, retry.Token, (byte)(packet[0] & 0x0f)));
        Assert.True(writer.TryWriteBytes(retry.IntegrityTag));
        Assert.Equal(hex, Convert.ToHexStringLower(writer.Written));
    }

    // RFC 9001 §5.8: the pseudo-packet is ODCID length, ODCID, then the Retry without its tag.
    [Fact]
    public void RetryPseudoPacketLayout()
    {
        byte[] packet = Convert.FromHexString(Rfc9001Retry);
        Assert.True(RetryPacket.TryParse(packet, out RetryPacket retry));
        byte[] odcid = Convert.FromHexString("8394c8f03e515708");
        byte[] pseudo = new byte[RetryPacket.GetPseudoPacketLength(odcid.Length, retry.PacketWithoutTag.Length)];
        Assert.True(RetryPacket.TryWritePseudoPacket(pseudo, odcid, retry.PacketWithoutTag, out int written));
        Assert.Equal(pseudo.Length, written);
        Assert.Equal("088394c8f03e515708ff000000010008f067a5502a4262b5746f6b656e", Convert.ToHexStringLower(pseudo));
        Assert.False(RetryPacket.TryWritePseudoPacket(new byte[pseudo.Length - 1], odcid, retry.PacketWithoutTag, out _));
    }

    [Theory]
    [InlineData(QuicVersion.V1, (int)PacketType.Initial, 0x00)]
    [InlineData(QuicVersion.V1, (int)PacketType.ZeroRtt, 0x10)]
    [InlineData(QuicVersion.V1, (int)PacketType.Handshake, 0x20)]
    [InlineData(QuicVersion.V1, (int)PacketType.Retry, 0x30)]
    [InlineData(QuicVersion.V2, (int)PacketType.Initial, 0x10)]
    [InlineData(QuicVersion.V2, (int)PacketType.ZeroRtt, 0x20)]
    [InlineData(QuicVersion.V2, (int)PacketType.Handshake, 0x30)]
    [InlineData(QuicVersion.V2, (int)PacketType.Retry, 0x00)]
    public void TypeBitsPerVersion(uint version, int typeValue, int bits)
    {
        var type = (PacketType)typeValue;
        Assert.Equal(bits >> 4, PacketFirstByte.GetLongPacketTypeBits(type, version));
        Assert.Equal(type, PacketFirstByte.GetLongPacketType((byte)(0xc0 | bits), version));
    }

    [Theory]
    [InlineData((int)PacketType.Initial, QuicVersion.V1)]
    [InlineData((int)PacketType.Handshake, QuicVersion.V1)]
    [InlineData((int)PacketType.ZeroRtt, QuicVersion.V1)]
    [InlineData((int)PacketType.Initial, QuicVersion.V2)]
    [InlineData((int)PacketType.Handshake, QuicVersion.V2)]
    [InlineData((int)PacketType.ZeroRtt, QuicVersion.V2)]
    public void LongHeaderWriteThenPatchLengthParses(int typeValue, uint version)
    {
        var type = (PacketType)typeValue;
        byte[] buffer = new byte[200];
        var writer = new QuicWriter(buffer);
        byte[] dcid = [1, 2, 3, 4, 5, 6, 7, 8];
        byte[] scid = [9, 9, 9];
        byte[] token = type == PacketType.Initial ? [0xaa, 0xbb] : [];
        Assert.True(LongHeader.TryWrite(ref writer, type, version, dcid, scid, token, 2, out int lengthOffset));
        int pnOffset = writer.Position;
        Assert.True(PacketNumber.TryWrite(ref writer, 0x1234, 2));
        Assert.True(writer.TryFill(0x5a, 40));
        Assert.True(LongHeader.TryPatchLength(buffer, lengthOffset, writer.Position - pnOffset));
        int packetLength = writer.Position;

        Assert.True(LongHeader.TryParse(buffer.AsSpan(0, packetLength + 10), out LongHeader header));
        Assert.Equal(type, header.Type);
        Assert.Equal(version, header.Version);
        Assert.Equal(dcid, header.DestinationConnectionId.ToArray());
        Assert.Equal(scid, header.SourceConnectionId.ToArray());
        Assert.Equal(token, header.Token.ToArray());
        Assert.Equal(pnOffset, header.PacketNumberOffset);
        Assert.Equal(42, header.PayloadLength);
        Assert.Equal(packetLength, header.TotalLength);
        Assert.Equal(2, PacketFirstByte.GetPacketNumberLength(header.FirstByte));
    }

    [Fact]
    public void LongHeaderWriterRefusesBadInput()
    {
        byte[] buffer = new byte[100];
        var writer = new QuicWriter(buffer);
        Assert.False(LongHeader.TryWrite(ref writer, PacketType.Handshake, QuicVersion.V1, default, default, new byte[1], 1, out _));
        Assert.False(LongHeader.TryWrite(ref writer, PacketType.Retry, QuicVersion.V1, default, default, default, 1, out _));
        Assert.False(LongHeader.TryWrite(ref writer, PacketType.Initial, 0x0a0a0a0a, default, default, default, 1, out _));
        Assert.False(LongHeader.TryWrite(ref writer, PacketType.Initial, QuicVersion.V1, new byte[21], default, default, 1, out _));
        Assert.False(LongHeader.TryWrite(ref writer, PacketType.Initial, QuicVersion.V1, default, default, default, 0, out _));
        Assert.Equal(0, writer.Position);
        Assert.False(LongHeader.TryPatchLength(buffer, 0, 16384));
    }

    [Fact]
    public void ConnectionIdLongerThan20IsRejectedForV1ButAllowedForUnknownVersions()
    {
        byte[] packet = new byte[100];
        packet[0] = 0xc0;
        packet[4] = 1;
        packet[5] = 21;
        Assert.False(LongHeader.TryParse(packet, out _));

        packet[1] = 0x1a; // version 0x1a000001: unknown
        Assert.True(LongHeader.TryParse(packet, out LongHeader header));
        Assert.Equal(PacketType.UnsupportedVersion, header.Type);
        Assert.Equal(21, header.DestinationConnectionId.Length);
        Assert.Equal(100, header.TotalLength);
    }

    [Fact]
    public void FixedBitMustBeSetUnlessGreased()
    {
        byte[] datagram = Datagram(Rfc9001ClientUnprotectedHeader, 1200);
        datagram[0] &= 0xbf;
        Assert.False(LongHeader.TryParse(datagram, out _));
        Assert.True(LongHeader.TryParse(datagram, out _, allowGreasedFixedBit: true));
        Assert.False(ShortHeader.TryParse([0x01, 1, 2, 3, 4], 4, out _));
        Assert.True(ShortHeader.TryParse([0x01, 1, 2, 3, 4], 4, out _, allowGreasedFixedBit: true));
    }

    [Fact]
    public void LengthPastTheDatagramIsRejected()
    {
        byte[] datagram = Datagram(Rfc9001ClientUnprotectedHeader, 1199);
        Assert.False(LongHeader.TryParse(datagram, out _));
    }

    [Fact]
    public void ShortHeaderParsesWithTheLocalConnectionIdLength()
    {
        byte[] buffer = new byte[64];
        var writer = new QuicWriter(buffer);
        byte[] dcid = [0xde, 0xad, 0xbe, 0xef, 0x01];
        Assert.True(ShortHeader.TryWrite(ref writer, dcid, spinBit: true, keyPhase: true, packetNumberLength: 3));
        Assert.True(PacketNumber.TryWrite(ref writer, 77, 3));
        Assert.True(writer.TryFill(1, 20));

        Assert.True(ShortHeader.TryParse(writer.Written, dcid.Length, out ShortHeader header));
        Assert.Equal(dcid, header.DestinationConnectionId.ToArray());
        Assert.Equal(6, header.PacketNumberOffset);
        Assert.True(header.SpinBit);
        Assert.True(PacketFirstByte.GetKeyPhase(header.FirstByte));
        Assert.Equal(3, PacketFirstByte.GetPacketNumberLength(header.FirstByte));
        Assert.Equal(writer.Position, header.Packet.Length);
        Assert.False(ShortHeader.TryParse(writer.Written.Slice(0, 5), dcid.Length, out _));
        Assert.False(ShortHeader.TryParse(Convert.FromHexString(Rfc9001ClientUnprotectedHeader), 8, out _));
    }

    [Fact]
    public void VersionNegotiationRoundTripsAndIteratesVersions()
    {
        byte[] buffer = new byte[64];
        var writer = new QuicWriter(buffer);
        uint[] versions = [QuicVersion.V2, QuicVersion.V1, 0x1a2a3a4a];
        Assert.True(VersionNegotiationPacket.TryWrite(ref writer, [1, 2, 3], [4, 5], versions, 0xff));
        Assert.Equal(VersionNegotiationPacket.GetEncodedLength(3, 2, 3), writer.Position);
        Assert.Equal("ff00000000030102030204056b3343cf000000011a2a3a4a", Convert.ToHexStringLower(writer.Written));

        Assert.True(LongHeader.TryParse(writer.Written, out LongHeader header));
        Assert.Equal(PacketType.VersionNegotiation, header.Type);

        Assert.True(VersionNegotiationPacket.TryParse(writer.Written, out VersionNegotiationPacket vn));
        Assert.Equal(new byte[] { 1, 2, 3 }, vn.DestinationConnectionId.ToArray());
        Assert.Equal(new byte[] { 4, 5 }, vn.SourceConnectionId.ToArray());
        Assert.Equal(3, vn.VersionCount);
        var seen = new List<uint>();
        foreach (uint v in vn.Versions)
        {
            seen.Add(v);
        }

        Assert.Equal(versions, seen);
        Assert.True(vn.Contains(QuicVersion.V1));
        Assert.False(vn.Contains(0x12345678));

        Assert.False(VersionNegotiationPacket.TryParse(writer.Written.Slice(0, writer.Position - 1), out _));
        Assert.False(VersionNegotiationPacket.TryParse(Convert.FromHexString(Rfc9001Retry), out _));
    }

    [Fact]
    public void CoalescedDatagramSplitsByLength()
    {
        byte[] buffer = new byte[300];
        var writer = new QuicWriter(buffer);
        byte[] dcid = [1, 2, 3, 4];
        WriteLong(ref writer, PacketType.Initial, dcid, 30);
        WriteLong(ref writer, PacketType.Handshake, dcid, 50);
        int shortStart = writer.Position;
        Assert.True(ShortHeader.TryWrite(ref writer, dcid, false, false, 1));
        Assert.True(writer.TryFill(7, 40));

        var lengths = new List<int>();
        var offsets = new List<int>();
        var enumerator = new CoalescedPacketEnumerator(writer.Written);
        while (enumerator.MoveNext())
        {
            lengths.Add(enumerator.Current.Length);
            offsets.Add(enumerator.CurrentOffset);
        }

        Assert.False(enumerator.StoppedOnMalformedPacket);
        Assert.Equal(3, lengths.Count);
        Assert.Equal(shortStart, offsets[2]);
        Assert.Equal(writer.Position, offsets[2] + lengths[2]);
        Assert.Equal(offsets[1], lengths[0]);
    }

    [Fact]
    public void CoalescedSplitterStopsAtMalformedLongHeader()
    {
        byte[] buffer = new byte[100];
        var writer = new QuicWriter(buffer);
        WriteLong(ref writer, PacketType.Handshake, [1], 10);
        int first = writer.Position;
        Assert.True(writer.TryWriteBytes([0xc0, 0, 0, 0, 1, 30]));

        var enumerator = new CoalescedPacketEnumerator(writer.Written);
        Assert.True(enumerator.MoveNext());
        Assert.Equal(first, enumerator.Current.Length);
        Assert.False(enumerator.MoveNext());
        Assert.True(enumerator.StoppedOnMalformedPacket);
    }

    [Fact]
    public void StatelessResetTokenCandidateIsTheLast16Bytes()
    {
        byte[] token = Convert.FromHexString("00112233445566778899aabbccddeeff");
        byte[] datagram = new byte[43];
        new SeededRandomSource(5).Fill(datagram.AsSpan(0, 43 - StatelessReset.TokenLength));
        Assert.True(StatelessReset.TryWrite(datagram, token));
        Assert.False(PacketFirstByte.IsLongHeader(datagram[0]));
        Assert.True(PacketFirstByte.HasFixedBit(datagram[0]));
        Assert.True(StatelessReset.TryGetTokenCandidate(datagram, out ReadOnlySpan<byte> candidate));
        Assert.True(StatelessReset.TokenEquals(candidate, token));
        Assert.False(StatelessReset.TokenEquals(candidate.Slice(1), token));
        Assert.False(StatelessReset.TryGetTokenCandidate(datagram.AsSpan(0, 20), out _));
        Assert.True(StatelessReset.TryGetTokenCandidate(datagram.AsSpan(0, 21), out _));
        Assert.False(StatelessReset.TryWrite(new byte[20], token));
    }

    private static void WriteLong(ref QuicWriter writer, PacketType type, ReadOnlySpan<byte> dcid, int payload)
    {
        Assert.True(LongHeader.TryWrite(ref writer, type, QuicVersion.V1, dcid, default, default, 1, out int lengthOffset));
        Assert.True(writer.TryFill(0, payload));
        Assert.True(LongHeader.TryPatchLength(writer.Buffer, lengthOffset, writer.Position - lengthOffset - 2));
    }
}
