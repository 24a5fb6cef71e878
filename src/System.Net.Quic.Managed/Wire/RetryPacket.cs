namespace System.Net.Quic.Managed.Wire;

/// <summary>A Retry packet. RFC 9000 §17.2.5. The integrity tag is split off here and verified by the Crypto layer
/// over the Retry pseudo-packet of RFC 9001 §5.8, which <see cref="TryWritePseudoPacket"/> builds.</summary>
internal readonly ref struct RetryPacket
{
    public const int IntegrityTagLength = LongHeader.RetryIntegrityTagLength;

    public uint Version { get; init; }

    public byte FirstByte { get; init; }

    public ReadOnlySpan<byte> DestinationConnectionId { get; init; }

    public ReadOnlySpan<byte> SourceConnectionId { get; init; }

    /// <summary>The Retry Token. A client discards a Retry with an empty token (RFC 9000 §17.2.5.2); that check is the
    /// connection's, so an empty token still parses.</summary>
    public ReadOnlySpan<byte> Token { get; init; }

    public ReadOnlySpan<byte> IntegrityTag { get; init; }

    /// <summary>The packet up to the tag: the last part of the pseudo-packet.</summary>
    public ReadOnlySpan<byte> PacketWithoutTag { get; init; }

    /// <summary>Parses a Retry packet of QUIC v1 or v2 (the whole datagram).</summary>
    public static bool TryParse(ReadOnlySpan<byte> datagram, out RetryPacket packet, bool allowGreasedFixedBit = false)
    {
        packet = default;
        if (!LongHeader.TryParse(datagram, out LongHeader header, allowGreasedFixedBit) || header.Type != PacketType.Retry)
        {
            return false;
        }

        packet = new RetryPacket
        {
            Version = header.Version,
            FirstByte = header.FirstByte,
            DestinationConnectionId = header.DestinationConnectionId,
            SourceConnectionId = header.SourceConnectionId,
            Token = header.Token,
            IntegrityTag = header.RetryIntegrityTag,
            PacketWithoutTag = datagram.Slice(0, datagram.Length - IntegrityTagLength),
        };
        return true;
    }

    /// <summary>Writes a Retry packet without its tag; the caller computes the tag over the pseudo-packet and appends
    /// it (16 bytes). <paramref name="unusedBits"/> fills the 4 unused low bits.</summary>
    public static bool TryWriteWithoutTag(
        ref QuicWriter writer,
        uint version,
        ReadOnlySpan<byte> destinationConnectionId,
        ReadOnlySpan<byte> sourceConnectionId,
        ReadOnlySpan<byte> token,
        byte unusedBits = 0)
    {
        int typeBits = PacketFirstByte.GetLongPacketTypeBits(PacketType.Retry, version);
        if (!QuicVersion.IsSupported(version) ||
            destinationConnectionId.Length > ConnectionIdLimits.MaxLength ||
            sourceConnectionId.Length > ConnectionIdLimits.MaxLength ||
            7 + destinationConnectionId.Length + sourceConnectionId.Length + token.Length > writer.Remaining)
        {
            return false;
        }

        writer.TryWriteByte((byte)(PacketFirstByte.HeaderFormBit | PacketFirstByte.FixedBit | (typeBits << 4) | (unusedBits & 0x0f)));
        writer.TryWriteUInt32(version);
        writer.TryWriteByte((byte)destinationConnectionId.Length);
        writer.TryWriteBytes(destinationConnectionId);
        writer.TryWriteByte((byte)sourceConnectionId.Length);
        writer.TryWriteBytes(sourceConnectionId);
        writer.TryWriteBytes(token);
        return true;
    }

    /// <summary>Length of the Retry pseudo-packet. RFC 9001 §5.8.</summary>
    public static int GetPseudoPacketLength(int originalDestinationConnectionIdLength, int retryWithoutTagLength) =>
        1 + originalDestinationConnectionIdLength + retryWithoutTagLength;

    /// <summary>Writes the Retry pseudo-packet: ODCID Length (1 byte), Original Destination Connection ID, then the
    /// Retry packet without its tag. RFC 9001 §5.8. This is the associated data of the integrity AEAD.</summary>
    public static bool TryWritePseudoPacket(
        Span<byte> destination,
        ReadOnlySpan<byte> originalDestinationConnectionId,
        ReadOnlySpan<byte> retryWithoutTag,
        out int bytesWritten)
    {
        bytesWritten = 0;
        int length = GetPseudoPacketLength(originalDestinationConnectionId.Length, retryWithoutTag.Length);
        if (originalDestinationConnectionId.Length > ConnectionIdLimits.MaxLength || length > destination.Length)
        {
            return false;
        }

        destination[0] = (byte)originalDestinationConnectionId.Length;
        originalDestinationConnectionId.CopyTo(destination.Slice(1));
        retryWithoutTag.CopyTo(destination.Slice(1 + originalDestinationConnectionId.Length));
        bytesWritten = length;
        return true;
    }
}
