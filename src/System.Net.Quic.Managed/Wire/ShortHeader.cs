namespace System.Net.Quic.Managed.Wire;

/// <summary>A parsed 1-RTT (short header) packet. RFC 9000 §17.3.1. The short header carries no connection ID length,
/// so the receiver supplies the length of the connection IDs it issued.</summary>
internal readonly ref struct ShortHeader
{
    /// <summary>First byte as received: bits 0x1f are under header protection.</summary>
    public byte FirstByte { get; init; }

    public ReadOnlySpan<byte> DestinationConnectionId { get; init; }

    /// <summary>Offset of the Packet Number field from the start of <see cref="Packet"/>.</summary>
    public int PacketNumberOffset { get; init; }

    /// <summary>The packet: a short header packet always extends to the end of the datagram. RFC 9000 §12.2.</summary>
    public ReadOnlySpan<byte> Packet { get; init; }

    /// <summary>The latency spin bit, which header protection does not cover. RFC 9000 §17.4.</summary>
    public bool SpinBit => PacketFirstByte.GetSpinBit(FirstByte);

    /// <summary>Parses a short header. False when the header form is long, the Fixed Bit is cleared (unless
    /// <paramref name="allowGreasedFixedBit"/>, RFC 9287), or the packet is shorter than its header.</summary>
    public static bool TryParse(ReadOnlySpan<byte> packet, int connectionIdLength, out ShortHeader header, bool allowGreasedFixedBit = false)
    {
        header = default;
        if (connectionIdLength < 0 || connectionIdLength > ConnectionIdLimits.MaxLength ||
            packet.Length < 1 + connectionIdLength || PacketFirstByte.IsLongHeader(packet[0]) ||
            (!allowGreasedFixedBit && !PacketFirstByte.HasFixedBit(packet[0])))
        {
            return false;
        }

        header = new ShortHeader
        {
            FirstByte = packet[0],
            DestinationConnectionId = packet.Slice(1, connectionIdLength),
            PacketNumberOffset = 1 + connectionIdLength,
            Packet = packet,
        };
        return true;
    }

    /// <summary>Writes a short header up to (not including) the packet number. RFC 9000 §17.3.1.</summary>
    public static bool TryWrite(ref QuicWriter writer, ReadOnlySpan<byte> destinationConnectionId, bool spinBit, bool keyPhase, int packetNumberLength)
    {
        if (packetNumberLength < 1 || packetNumberLength > 4 || destinationConnectionId.Length > ConnectionIdLimits.MaxLength ||
            writer.Remaining < 1 + destinationConnectionId.Length)
        {
            return false;
        }

        int firstByte = PacketFirstByte.FixedBit | (packetNumberLength - 1);
        if (spinBit)
        {
            firstByte |= PacketFirstByte.SpinBit;
        }

        if (keyPhase)
        {
            firstByte |= PacketFirstByte.KeyPhaseBit;
        }

        writer.TryWriteByte((byte)firstByte);
        writer.TryWriteBytes(destinationConnectionId);
        return true;
    }
}
