namespace System.Net.Quic.Managed.Wire;

/// <summary>A parsed long header packet (Initial, 0-RTT, Handshake, Retry, Version Negotiation, or an unsupported
/// version). RFC 9000 §17.2, RFC 9369 §3.2. Spans point into the datagram; parsing happens before header protection
/// is removed, so only the unprotected fields are exposed.</summary>
internal readonly ref struct LongHeader
{
    /// <summary>Size of the Retry Integrity Tag. RFC 9001 §5.8.</summary>
    public const int RetryIntegrityTagLength = 16;

    /// <summary>The 2-byte varint usually reserved for the Length field before the payload size is known.</summary>
    public const int DefaultLengthFieldSize = 2;

    public PacketType Type { get; init; }

    public uint Version { get; init; }

    /// <summary>First byte as received: its low 4 bits are still under header protection for Initial/0-RTT/Handshake.</summary>
    public byte FirstByte { get; init; }

    public ReadOnlySpan<byte> DestinationConnectionId { get; init; }

    public ReadOnlySpan<byte> SourceConnectionId { get; init; }

    /// <summary>Initial: the Token field. Retry: the Retry Token. Empty otherwise.</summary>
    public ReadOnlySpan<byte> Token { get; init; }

    /// <summary>Retry only: the 16-byte Retry Integrity Tag.</summary>
    public ReadOnlySpan<byte> RetryIntegrityTag { get; init; }

    /// <summary>Initial/0-RTT/Handshake: the Length field (packet number plus protected payload).</summary>
    public int PayloadLength { get; init; }

    /// <summary>Initial/0-RTT/Handshake: offset of the Packet Number field from the start of <see cref="Packet"/>.</summary>
    public int PacketNumberOffset { get; init; }

    /// <summary>The bytes of this packet within the datagram: up to the end of the Length for Initial/0-RTT/Handshake,
    /// the rest of the datagram for Retry, Version Negotiation and unsupported versions.</summary>
    public ReadOnlySpan<byte> Packet { get; init; }

    /// <summary>Total length of this packet in the datagram.</summary>
    public int TotalLength => Packet.Length;

    /// <summary>Parses the long header at the start of <paramref name="datagram"/>. False for anything malformed
    /// (such packets are discarded, RFC 9000 §5.2): truncation, a v1/v2 connection ID longer than 20 bytes, a cleared
    /// Fixed Bit (unless <paramref name="allowGreasedFixedBit"/>, RFC 9287), or a Length past the datagram's end.</summary>
    public static bool TryParse(ReadOnlySpan<byte> datagram, out LongHeader header, bool allowGreasedFixedBit = false)
    {
        header = default;
        var reader = new QuicReader(datagram);
        if (!reader.TryReadByte(out byte firstByte) || !PacketFirstByte.IsLongHeader(firstByte) ||
            !reader.TryReadUInt32(out uint version))
        {
            return false;
        }

        bool supported = QuicVersion.IsSupported(version);
        int maxCid = supported ? ConnectionIdLimits.MaxLength : ConnectionIdLimits.MaxInvariantLength;
        if (!reader.TryReadByte(out byte dcidLength) || dcidLength > maxCid ||
            !reader.TryReadBytes(dcidLength, out ReadOnlySpan<byte> dcid) ||
            !reader.TryReadByte(out byte scidLength) || scidLength > maxCid ||
            !reader.TryReadBytes(scidLength, out ReadOnlySpan<byte> scid))
        {
            return false;
        }

        if (!supported)
        {
            // RFC 8999 §5.1: beyond the connection IDs nothing is known; Version Negotiation carries versions.
            header = new LongHeader
            {
                Type = version == QuicVersion.Negotiation ? PacketType.VersionNegotiation : PacketType.UnsupportedVersion,
                Version = version,
                FirstByte = firstByte,
                DestinationConnectionId = dcid,
                SourceConnectionId = scid,
                Packet = datagram,
            };
            return true;
        }

        if (!allowGreasedFixedBit && !PacketFirstByte.HasFixedBit(firstByte))
        {
            return false;
        }

        PacketType type = PacketFirstByte.GetLongPacketType(firstByte, version);
        if (type == PacketType.Retry)
        {
            // RFC 9000 §17.2.5: the Retry Token runs to the tag, which ends the datagram.
            if (reader.Remaining < RetryIntegrityTagLength)
            {
                return false;
            }

            reader.TryReadBytes(reader.Remaining - RetryIntegrityTagLength, out ReadOnlySpan<byte> retryToken);
            header = new LongHeader
            {
                Type = type,
                Version = version,
                FirstByte = firstByte,
                DestinationConnectionId = dcid,
                SourceConnectionId = scid,
                Token = retryToken,
                RetryIntegrityTag = reader.ReadToEnd(),
                Packet = datagram,
            };
            return true;
        }

        ReadOnlySpan<byte> token = default;
        if (type == PacketType.Initial && !reader.TryReadLengthPrefixed(out token))
        {
            return false;
        }

        if (!reader.TryReadVarInt(out ulong length) || length > (ulong)reader.Remaining)
        {
            return false;
        }

        int packetNumberOffset = reader.Position;
        header = new LongHeader
        {
            Type = type,
            Version = version,
            FirstByte = firstByte,
            DestinationConnectionId = dcid,
            SourceConnectionId = scid,
            Token = token,
            PayloadLength = (int)length,
            PacketNumberOffset = packetNumberOffset,
            Packet = datagram.Slice(0, packetNumberOffset + (int)length),
        };
        return true;
    }

    /// <summary>Writes an Initial, 0-RTT or Handshake long header up to and including a placeholder Length field of
    /// <paramref name="lengthFieldSize"/> bytes. The caller then writes the packet number and payload and calls
    /// <see cref="TryPatchLength"/> with <paramref name="lengthFieldOffset"/> (relative to the writer's buffer).
    /// <paramref name="token"/> is for Initial only (empty when none) and must be empty for other types. RFC 9000 §17.2.</summary>
    public static bool TryWrite(
        ref QuicWriter writer,
        PacketType type,
        uint version,
        ReadOnlySpan<byte> destinationConnectionId,
        ReadOnlySpan<byte> sourceConnectionId,
        ReadOnlySpan<byte> token,
        int packetNumberLength,
        out int lengthFieldOffset,
        int lengthFieldSize = DefaultLengthFieldSize)
    {
        lengthFieldOffset = -1;
        int typeBits = PacketFirstByte.GetLongPacketTypeBits(type, version);
        if (typeBits < 0 || type == PacketType.Retry || !QuicVersion.IsSupported(version) ||
            packetNumberLength < 1 || packetNumberLength > 4 ||
            destinationConnectionId.Length > ConnectionIdLimits.MaxLength ||
            sourceConnectionId.Length > ConnectionIdLimits.MaxLength ||
            (type != PacketType.Initial && !token.IsEmpty) ||
            VariableLengthInteger.GetMaxValueForLength(lengthFieldSize) == 0)
        {
            return false;
        }

        int tokenFieldLength = type == PacketType.Initial
            ? VariableLengthInteger.GetEncodedLength((ulong)token.Length) + token.Length
            : 0;
        int needed = 1 + 4 + 1 + destinationConnectionId.Length + 1 + sourceConnectionId.Length + tokenFieldLength + lengthFieldSize;
        if (needed > writer.Remaining)
        {
            return false;
        }

        writer.TryWriteByte((byte)(PacketFirstByte.HeaderFormBit | PacketFirstByte.FixedBit | (typeBits << 4) | (packetNumberLength - 1)));
        writer.TryWriteUInt32(version);
        writer.TryWriteByte((byte)destinationConnectionId.Length);
        writer.TryWriteBytes(destinationConnectionId);
        writer.TryWriteByte((byte)sourceConnectionId.Length);
        writer.TryWriteBytes(sourceConnectionId);
        if (type == PacketType.Initial)
        {
            writer.TryWriteLengthPrefixed(token);
        }

        lengthFieldOffset = writer.Position;
        writer.TryFill(0, lengthFieldSize);
        return true;
    }

    /// <summary>Fills the Length field reserved by <see cref="TryWrite"/> with <paramref name="length"/>
    /// (packet number + protected payload including the AEAD tag). False when it does not fit the reserved size.</summary>
    public static bool TryPatchLength(Span<byte> buffer, int lengthFieldOffset, int length, int lengthFieldSize = DefaultLengthFieldSize)
    {
        return lengthFieldOffset >= 0 && length >= 0 && lengthFieldOffset <= buffer.Length &&
            VariableLengthInteger.TryWrite(buffer.Slice(lengthFieldOffset), (ulong)length, lengthFieldSize);
    }
}
