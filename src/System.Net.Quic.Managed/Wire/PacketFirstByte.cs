namespace System.Net.Quic.Managed.Wire;

/// <summary>Bit layout of the first byte of a packet. RFC 9000 §17.2 and §17.3, RFC 9369 §3.2.</summary>
internal static class PacketFirstByte
{
    /// <summary>Header Form bit: 1 for long headers. RFC 9000 §17.2.</summary>
    public const byte HeaderFormBit = 0x80;

    /// <summary>Fixed Bit: 1 in every v1/v2 packet except Version Negotiation, unless greased (RFC 9287).</summary>
    public const byte FixedBit = 0x40;

    /// <summary>Spin bit of the short header: not covered by header protection. RFC 9000 §17.4.</summary>
    public const byte SpinBit = 0x20;

    /// <summary>Key Phase bit of the short header: protected. RFC 9000 §17.3.1.</summary>
    public const byte KeyPhaseBit = 0x04;

    /// <summary>Bits masked by header protection in a long header. RFC 9001 §5.4.1.</summary>
    public const byte LongHeaderProtectedBits = 0x0f;

    /// <summary>Bits masked by header protection in a short header. RFC 9001 §5.4.1.</summary>
    public const byte ShortHeaderProtectedBits = 0x1f;

    /// <summary>Reserved Bits of a long header (must be 0 after header protection is removed). RFC 9000 §17.2.</summary>
    public const byte LongHeaderReservedBits = 0x0c;

    /// <summary>Reserved Bits of a short header (must be 0 after header protection is removed). RFC 9000 §17.3.1.</summary>
    public const byte ShortHeaderReservedBits = 0x18;

    public static bool IsLongHeader(byte firstByte) => (firstByte & HeaderFormBit) != 0;

    public static bool HasFixedBit(byte firstByte) => (firstByte & FixedBit) != 0;

    /// <summary>Packet Number Length: valid only after header protection is removed.</summary>
    public static int GetPacketNumberLength(byte unprotectedFirstByte) => (unprotectedFirstByte & 0x03) + 1;

    /// <summary>Key Phase bit of a short header: valid only after header protection is removed.</summary>
    public static bool GetKeyPhase(byte unprotectedFirstByte) => (unprotectedFirstByte & KeyPhaseBit) != 0;

    public static bool GetSpinBit(byte firstByte) => (firstByte & SpinBit) != 0;

    /// <summary>True when the reserved bits are zero. Non-zero reserved bits in a packet that was successfully
    /// unprotected are a PROTOCOL_VIOLATION. RFC 9000 §17.2, §17.3.1.</summary>
    public static bool ReservedBitsAreZero(byte unprotectedFirstByte) => IsLongHeader(unprotectedFirstByte)
        ? (unprotectedFirstByte & LongHeaderReservedBits) == 0
        : (unprotectedFirstByte & ShortHeaderReservedBits) == 0;

    /// <summary>The 2-bit Long Packet Type for a packet type and version. RFC 9000 §17.2 (v1) and RFC 9369 §3.2 (v2).</summary>
    public static int GetLongPacketTypeBits(PacketType type, uint version)
    {
        int v1 = type switch
        {
            PacketType.Initial => 0,
            PacketType.ZeroRtt => 1,
            PacketType.Handshake => 2,
            PacketType.Retry => 3,
            _ => -1,
        };
        if (v1 < 0)
        {
            return -1;
        }

        // v2 rotates every type by one: Initial=0b01, 0-RTT=0b10, Handshake=0b11, Retry=0b00.
        return version == QuicVersion.V2 ? (v1 + 1) & 3 : v1;
    }

    /// <summary>The packet type encoded by the 2 type bits of a long header of a supported version.</summary>
    public static PacketType GetLongPacketType(byte firstByte, uint version)
    {
        int bits = (firstByte >> 4) & 3;
        if (version == QuicVersion.V2)
        {
            bits = (bits + 3) & 3;
        }

        return bits switch
        {
            0 => PacketType.Initial,
            1 => PacketType.ZeroRtt,
            2 => PacketType.Handshake,
            _ => PacketType.Retry,
        };
    }
}
