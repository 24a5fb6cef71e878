using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Wire;

/// <summary>A Version Negotiation packet. RFC 9000 §17.2.1. The connection IDs follow the version-independent
/// rules (up to 255 bytes, RFC 8999 §6), and the version list is read lazily without allocation.</summary>
internal readonly ref struct VersionNegotiationPacket
{
    private readonly ReadOnlySpan<byte> _versions;

    private VersionNegotiationPacket(ReadOnlySpan<byte> dcid, ReadOnlySpan<byte> scid, ReadOnlySpan<byte> versions)
    {
        DestinationConnectionId = dcid;
        SourceConnectionId = scid;
        _versions = versions;
    }

    public ReadOnlySpan<byte> DestinationConnectionId { get; }

    public ReadOnlySpan<byte> SourceConnectionId { get; }

    /// <summary>Number of versions listed.</summary>
    public int VersionCount => _versions.Length / 4;

    /// <summary>Enumerates the Supported Version fields in order.</summary>
    public SupportedVersionEnumerator Versions => new(_versions);

    public bool Contains(uint version)
    {
        foreach (uint listed in Versions)
        {
            if (listed == version)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Parses a Version Negotiation packet (the whole datagram). False when it is not one (long header with
    /// version 0) or its version list is not a whole number of 32-bit versions.</summary>
    public static bool TryParse(ReadOnlySpan<byte> datagram, out VersionNegotiationPacket packet)
    {
        packet = default;
        var reader = new QuicReader(datagram);
        if (!reader.TryReadByte(out byte firstByte) || !PacketFirstByte.IsLongHeader(firstByte) ||
            !reader.TryReadUInt32(out uint version) || version != QuicVersion.Negotiation ||
            !reader.TryReadByte(out byte dcidLength) || !reader.TryReadBytes(dcidLength, out ReadOnlySpan<byte> dcid) ||
            !reader.TryReadByte(out byte scidLength) || !reader.TryReadBytes(scidLength, out ReadOnlySpan<byte> scid) ||
            reader.Remaining % 4 != 0)
        {
            return false;
        }

        packet = new VersionNegotiationPacket(dcid, scid, reader.ReadToEnd());
        return true;
    }

    /// <summary>Length of a Version Negotiation packet with these fields.</summary>
    public static int GetEncodedLength(int dcidLength, int scidLength, int versionCount) => 7 + dcidLength + scidLength + (4 * versionCount);

    /// <summary>Writes a Version Negotiation packet. <paramref name="destinationConnectionId"/> echoes the client's
    /// Source Connection ID and <paramref name="sourceConnectionId"/> the client's Destination Connection ID (§17.2.1).
    /// <paramref name="unusedBits"/> should be random; the 0x40 bit is set so the packet looks like it has a Fixed Bit.</summary>
    public static bool TryWrite(
        ref QuicWriter writer,
        ReadOnlySpan<byte> destinationConnectionId,
        ReadOnlySpan<byte> sourceConnectionId,
        ReadOnlySpan<uint> supportedVersions,
        byte unusedBits)
    {
        if (destinationConnectionId.Length > ConnectionIdLimits.MaxInvariantLength ||
            sourceConnectionId.Length > ConnectionIdLimits.MaxInvariantLength ||
            GetEncodedLength(destinationConnectionId.Length, sourceConnectionId.Length, supportedVersions.Length) > writer.Remaining)
        {
            return false;
        }

        writer.TryWriteByte((byte)(PacketFirstByte.HeaderFormBit | PacketFirstByte.FixedBit | (unusedBits & 0x3f)));
        writer.TryWriteUInt32(QuicVersion.Negotiation);
        writer.TryWriteByte((byte)destinationConnectionId.Length);
        writer.TryWriteBytes(destinationConnectionId);
        writer.TryWriteByte((byte)sourceConnectionId.Length);
        writer.TryWriteBytes(sourceConnectionId);
        foreach (uint version in supportedVersions)
        {
            writer.TryWriteUInt32(version);
        }

        return true;
    }

    /// <summary>Allocation-free enumerator over the Supported Version list.</summary>
    public ref struct SupportedVersionEnumerator
    {
        private readonly ReadOnlySpan<byte> _versions;
        private int _offset;

        public SupportedVersionEnumerator(ReadOnlySpan<byte> versions)
        {
            _versions = versions;
            _offset = -4;
        }

        public uint Current { get; private set; }

        public readonly SupportedVersionEnumerator GetEnumerator() => this;

        public bool MoveNext()
        {
            if (_offset + 8 > _versions.Length)
            {
                return false;
            }

            _offset += 4;
            Current = BinaryPrimitives.ReadUInt32BigEndian(_versions.Slice(_offset));
            return true;
        }
    }
}
