using System.Buffers.Binary;
using System.Net;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>UDP payloads from a pcap (libpcap) or pcapng capture. Link types: Ethernet (with 802.1Q tags), Linux
/// cooked SLL and SLL2, raw IP (101, 228, 229) and BSD loopback; network layer IPv4 and IPv6 (first fragments and
/// unfragmented packets only). Non-UDP frames and other ports are skipped; a malformed file ends with a note.</summary>
internal sealed class PcapDatagramSource : IDatagramSource
{
    private const ushort LinkNull = 0;
    private const ushort LinkEthernet = 1;
    private const ushort LinkRaw = 101;
    private const ushort LinkLinuxSll = 113;
    private const ushort LinkIPv4 = 228;
    private const ushort LinkIPv6 = 229;
    private const ushort LinkLinuxSll2 = 276;

    private readonly byte[] _file;
    private readonly int? _port;

    public PcapDatagramSource(byte[] file, int? port)
    {
        _file = file;
        _port = port;
    }

    /// <summary>True when the bytes start with a pcap or pcapng magic number.</summary>
    public static bool LooksLikeCapture(ReadOnlySpan<byte> file)
    {
        if (file.Length < 4) return false;
        uint magic = BinaryPrimitives.ReadUInt32LittleEndian(file);
        return magic is 0xa1b2c3d4 or 0xd4c3b2a1 or 0xa1b23c4d or 0x4d3cb2a1 or 0x0a0d0d0a;
    }

    public IEnumerable<CapturedDatagram> Read()
    {
        if (_file.Length >= 4 && BinaryPrimitives.ReadUInt32LittleEndian(_file) == 0x0a0d0d0a)
        {
            return ReadPcapng();
        }

        return ReadPcap();
    }

    private IEnumerable<CapturedDatagram> ReadPcap()
    {
        // libpcap format: 24-byte global header, then 16-byte record headers. Magic gives byte order and time unit.
        if (_file.Length < 24)
        {
            yield return Note("pcap: file shorter than the 24-byte global header");
            yield break;
        }

        uint magic = BinaryPrimitives.ReadUInt32LittleEndian(_file);
        bool bigEndian = magic is 0xd4c3b2a1 or 0x4d3cb2a1;
        bool nanoseconds = magic is 0xa1b23c4d or 0x4d3cb2a1;
        if (magic is not (0xa1b2c3d4 or 0xd4c3b2a1 or 0xa1b23c4d or 0x4d3cb2a1))
        {
            yield return Note("pcap: not a pcap or pcapng file (bad magic number)");
            yield break;
        }

        uint linkType = ReadUInt32(_file.AsSpan(20), bigEndian) & 0xffff;
        int position = 24;
        int record = 0;
        while (position < _file.Length)
        {
            record++;
            if (_file.Length - position < 16)
            {
                yield return Note($"pcap: record {record} header truncated at offset {position}");
                yield break;
            }

            ReadOnlySpan<byte> header = _file.AsSpan(position, 16);
            long seconds = ReadUInt32(header, bigEndian);
            long fraction = ReadUInt32(header.Slice(4), bigEndian);
            uint capturedLength = ReadUInt32(header.Slice(8), bigEndian);
            if (capturedLength > (uint)(_file.Length - position - 16))
            {
                yield return Note($"pcap: record {record} at offset {position} claims {capturedLength} bytes past the end of the file");
                yield break;
            }

            long timestampUs = (seconds * 1_000_000) + (nanoseconds ? fraction / 1000 : fraction);
            CapturedDatagram? datagram = Decode(_file.AsSpan(position + 16, (int)capturedLength), (ushort)linkType, timestampUs);
            position += 16 + (int)capturedLength;
            if (datagram != null) yield return datagram;
        }
    }

    private IEnumerable<CapturedDatagram> ReadPcapng()
    {
        // pcapng: blocks of (type, total length, body, total length). The Section Header Block sets the byte order;
        // Interface Description Blocks give each interface's link type and timestamp resolution.
        var linkTypes = new List<ushort>();
        var unitsPerSecond = new List<ulong>();
        bool bigEndian = false;
        int position = 0;
        while (position < _file.Length)
        {
            if (_file.Length - position < 12)
            {
                yield return Note($"pcapng: truncated block header at offset {position}");
                yield break;
            }

            uint type = ReadUInt32(_file.AsSpan(position), bigEndian);
            if (type == 0x0a0d0d0a)
            {
                uint byteOrder = BinaryPrimitives.ReadUInt32LittleEndian(_file.AsSpan(position + 8));
                if (byteOrder == 0x1a2b3c4d) bigEndian = false;
                else if (byteOrder == 0x4d3c2b1a) bigEndian = true;
                else
                {
                    yield return Note($"pcapng: bad byte-order magic at offset {position}");
                    yield break;
                }

                linkTypes.Clear();
                unitsPerSecond.Clear();
            }

            uint blockLength = ReadUInt32(_file.AsSpan(position + 4), bigEndian);
            if (blockLength < 12 || blockLength % 4 != 0 || blockLength > (uint)(_file.Length - position))
            {
                yield return Note($"pcapng: block at offset {position} has invalid length {blockLength}");
                yield break;
            }

            ReadOnlySpan<byte> body = _file.AsSpan(position + 8, (int)blockLength - 12);
            CapturedDatagram? datagram = null;
            switch (type)
            {
                case 1: // Interface Description Block
                    if (body.Length >= 8)
                    {
                        linkTypes.Add(ReadUInt16(body, bigEndian));
                        unitsPerSecond.Add(ReadTimestampResolution(body.Slice(8), bigEndian));
                    }

                    break;
                case 6: // Enhanced Packet Block
                    if (body.Length >= 20)
                    {
                        int interfaceId = (int)Math.Min(ReadUInt32(body, bigEndian), int.MaxValue);
                        ulong timestamp = ((ulong)ReadUInt32(body.Slice(4), bigEndian) << 32) | ReadUInt32(body.Slice(8), bigEndian);
                        uint captured = ReadUInt32(body.Slice(12), bigEndian);
                        if (interfaceId < linkTypes.Count && captured <= (uint)(body.Length - 20))
                        {
                            ulong units = unitsPerSecond[interfaceId];
                            long timestampUs = (long)((timestamp / units * 1_000_000) + (timestamp % units * 1_000_000 / units));
                            datagram = Decode(body.Slice(20, (int)captured), linkTypes[interfaceId], timestampUs);
                        }
                    }

                    break;
                case 3: // Simple Packet Block: interface 0, no timestamp
                    if (body.Length >= 4 && linkTypes.Count > 0)
                    {
                        uint original = ReadUInt32(body, bigEndian);
                        int captured = (int)Math.Min(original, (uint)(body.Length - 4));
                        datagram = Decode(body.Slice(4, captured), linkTypes[0], null);
                    }

                    break;
            }

            position += (int)blockLength;
            if (datagram != null) yield return datagram;
        }
    }

    private static ulong ReadTimestampResolution(ReadOnlySpan<byte> options, bool bigEndian)
    {
        // pcapng if_tsresol (option 9): bit 7 clear = negative power of 10, set = negative power of 2. Default 10^-6.
        while (options.Length >= 4)
        {
            ushort code = ReadUInt16(options, bigEndian);
            ushort length = ReadUInt16(options.Slice(2), bigEndian);
            if (code == 0) break;
            int padded = 4 + ((length + 3) & ~3);
            if (code == 9 && length >= 1 && options.Length >= 5)
            {
                byte value = options[4];
                int exponent = value & 0x7f;
                if ((value & 0x80) != 0) return exponent is > 0 and < 63 ? 1UL << exponent : 1_000_000;
                ulong units = 1;
                for (int i = 0; i < exponent && i < 19; i++) units *= 10;
                return units;
            }

            if (padded > options.Length) break;
            options = options.Slice(padded);
        }

        return 1_000_000;
    }

    private CapturedDatagram? Decode(ReadOnlySpan<byte> frame, ushort linkType, long? timestampUs)
    {
        ReadOnlySpan<byte> ip;
        switch (linkType)
        {
            case LinkEthernet:
            {
                if (frame.Length < 14) return null;
                int offset = 12;
                ushort etherType = BinaryPrimitives.ReadUInt16BigEndian(frame.Slice(offset));
                // IEEE 802.1Q / 802.1ad tags, possibly stacked.
                while ((etherType == 0x8100 || etherType == 0x88a8) && frame.Length >= offset + 6)
                {
                    offset += 4;
                    etherType = BinaryPrimitives.ReadUInt16BigEndian(frame.Slice(offset));
                }

                if (etherType is not (0x0800 or 0x86dd)) return null;
                ip = frame.Slice(offset + 2);
                break;
            }
            case LinkLinuxSll:
                if (frame.Length < 16) return null;
                ip = frame.Slice(16);
                break;
            case LinkLinuxSll2:
                if (frame.Length < 20) return null;
                ip = frame.Slice(20);
                break;
            case LinkNull:
                if (frame.Length < 4) return null;
                ip = frame.Slice(4);
                break;
            case LinkRaw:
            case LinkIPv4:
            case LinkIPv6:
                ip = frame;
                break;
            default:
                return null;
        }

        return DecodeIp(ip, timestampUs);
    }

    private CapturedDatagram? DecodeIp(ReadOnlySpan<byte> ip, long? timestampUs)
    {
        if (ip.IsEmpty) return null;
        ReadOnlySpan<byte> udp;
        IPAddress source;
        IPAddress destination;
        int version = ip[0] >> 4;
        if (version == 4)
        {
            int headerLength = (ip[0] & 0x0f) * 4;
            if (headerLength < 20 || ip.Length < headerLength || ip[9] != 17) return null;
            // Non-first fragments carry no UDP header; first fragments are decoded as far as captured.
            ushort fragment = BinaryPrimitives.ReadUInt16BigEndian(ip.Slice(6));
            if ((fragment & 0x1fff) != 0) return null;
            int totalLength = BinaryPrimitives.ReadUInt16BigEndian(ip.Slice(2));
            int end = totalLength >= headerLength && totalLength <= ip.Length ? totalLength : ip.Length;
            source = new IPAddress(ip.Slice(12, 4));
            destination = new IPAddress(ip.Slice(16, 4));
            udp = ip.Slice(headerLength, end - headerLength);
        }
        else if (version == 6)
        {
            if (ip.Length < 40) return null;
            int payloadLength = BinaryPrimitives.ReadUInt16BigEndian(ip.Slice(4));
            byte next = ip[6];
            int offset = 40;
            int end = payloadLength > 0 && 40 + payloadLength <= ip.Length ? 40 + payloadLength : ip.Length;
            // Hop-by-hop, routing and destination options headers: (next, length in 8-octet units beyond the first).
            while (next is 0 or 43 or 60 && end - offset >= 8)
            {
                next = ip[offset];
                offset += (ip[offset + 1] + 1) * 8;
            }

            if (next != 17 || offset > end) return null;
            source = new IPAddress(ip.Slice(8, 16));
            destination = new IPAddress(ip.Slice(24, 16));
            udp = ip.Slice(offset, end - offset);
        }
        else
        {
            return null;
        }

        if (udp.Length < 8) return null;
        int sourcePort = BinaryPrimitives.ReadUInt16BigEndian(udp);
        int destinationPort = BinaryPrimitives.ReadUInt16BigEndian(udp.Slice(2));
        int udpLength = BinaryPrimitives.ReadUInt16BigEndian(udp.Slice(4));
        if (_port is int port && sourcePort != port && destinationPort != port) return null;
        ReadOnlySpan<byte> payload = udp.Slice(8);
        string? note = null;
        if (udpLength >= 8 && udpLength - 8 < payload.Length)
        {
            payload = payload.Slice(0, udpLength - 8);
        }
        else if (udpLength - 8 > payload.Length)
        {
            note = $"UDP length {udpLength} but only {payload.Length + 8} bytes captured (snap length or fragment)";
        }

        return new CapturedDatagram(timestampUs, new IPEndPoint(source, sourcePort).ToString(), new IPEndPoint(destination, destinationPort).ToString(), payload.ToArray(), note);
    }

    private static CapturedDatagram Note(string text) => new(null, null, null, [], text);

    private static uint ReadUInt32(ReadOnlySpan<byte> data, bool bigEndian) =>
        bigEndian ? BinaryPrimitives.ReadUInt32BigEndian(data) : BinaryPrimitives.ReadUInt32LittleEndian(data);

    private static ushort ReadUInt16(ReadOnlySpan<byte> data, bool bigEndian) =>
        bigEndian ? BinaryPrimitives.ReadUInt16BigEndian(data) : BinaryPrimitives.ReadUInt16LittleEndian(data);
}
