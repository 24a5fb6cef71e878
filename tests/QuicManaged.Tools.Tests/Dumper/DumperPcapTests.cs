using System.Buffers.Binary;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Captures built in the test: libpcap with Ethernet/IPv4/UDP and pcapng with Linux SLL2/IPv6/UDP, each
/// wrapping the RFC 9001 A.2 client Initial and A.3 server Initial.</summary>
public sealed class DumperPcapTests
{
    private static readonly byte[] s_client = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial);
    private static readonly byte[] s_server = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ServerInitial);

    [Fact]
    public void PcapEthernetIPv4DecodesBothInitials()
    {
        byte[] pcap = BuildPcap(
            (1_700_000_000, 0, EthernetIPv4([192, 0, 2, 1], 50000, [192, 0, 2, 2], 443, s_client)),
            (1_700_000_000, 1500, EthernetIPv4([192, 0, 2, 2], 443, [192, 0, 2, 1], 50000, s_server)),
            (1_700_000_000, 2000, EthernetIPv4([192, 0, 2, 9], 53, [192, 0, 2, 1], 53, [1, 2, 3])));
        string text = RunOnFile(pcap, "--port", "443");
        Assert.Contains("#1 t=0.000000 192.0.2.1:50000 -> 192.0.2.2:443 len=1200", text);
        Assert.Contains("#2 t=0.001500 192.0.2.2:443 -> 192.0.2.1:50000 len=135", text);
        Assert.DoesNotContain("#3", text);
        Assert.Contains("\"example.com\"", text);
        Assert.Contains("conn=1 from=server pn=1", text);
        Assert.Contains("TLS ServerHello length=86", text);

        string unfiltered = RunOnFile(pcap);
        Assert.Contains("#3 t=0.002000 192.0.2.9:53 -> 192.0.2.1:53 len=3", unfiltered);

        Assert.Equal("", RunOnFile(pcap, "--port", "8443"));
    }

    [Fact]
    public void PcapngSll2IPv6DecodesBothInitials()
    {
        byte[] pcapng = BuildPcapngSll2IPv6();
        string text = RunOnFile(pcapng);
        Assert.Contains("#1 t=0.000000 [2001:db8::1]:50000 -> [2001:db8::2]:443 len=1200", text);
        Assert.Contains("#2 t=0.000250 [2001:db8::2]:443 -> [2001:db8::1]:50000 len=135", text);
        Assert.Contains("TLS ClientHello length=237", text);
        Assert.Contains("TLS ServerHello length=86", text);
    }

    [Theory]
    [InlineData(113u, 16)] // LINKTYPE_LINUX_SLL: 16-byte cooked header
    [InlineData(101u, 0)]  // LINKTYPE_RAW
    [InlineData(228u, 0)]  // LINKTYPE_IPV4
    [InlineData(0u, 4)]    // LINKTYPE_NULL: 4-byte address family
    public void OtherLinkTypesCarryIPv4(uint linkType, int linkHeaderLength)
    {
        byte[] ethernet = EthernetIPv4([198, 51, 100, 7], 4433, [198, 51, 100, 8], 60000, s_client);
        byte[] frame = new byte[linkHeaderLength + ethernet.Length - 14];
        ethernet.AsSpan(14).CopyTo(frame.AsSpan(linkHeaderLength));
        if (linkType == 113) frame[14] = 0x08; // protocol IPv4
        string text = RunOnFile(BuildPcap(linkType, (7, 0, frame)));
        Assert.Contains("#1 t=0.000000 198.51.100.7:4433 -> 198.51.100.8:60000 len=1200", text);
        Assert.Contains("TLS ClientHello length=237", text);
    }

    [Fact]
    public void TruncatedPcapReportsAndKeepsEarlierRecords()
    {
        byte[] pcap = BuildPcap((1, 0, EthernetIPv4([10, 0, 0, 1], 1, [10, 0, 0, 2], 2, s_client)),
                                (1, 5, EthernetIPv4([10, 0, 0, 2], 2, [10, 0, 0, 1], 1, s_server)));
        string text = RunOnFile(pcap.AsSpan(0, pcap.Length - 40).ToArray());
        Assert.Contains("TLS ClientHello", text);
        Assert.Contains("note: pcap: record 2 at offset", text);
    }

    [Fact]
    public void NotACaptureFileIsAnInputError()
    {
        string path = Path.GetTempFileName();
        try
        {
            File.WriteAllBytes(path, [1, 2, 3, 4, 5]);
            var error = new StringWriter();
            Assert.Equal(1, DumperCommand.Run(["--pcap", path], new StringWriter(), error));
            Assert.Contains("not a pcap", error.ToString());
        }
        finally
        {
            File.Delete(path);
        }
    }

    private static string RunOnFile(byte[] capture, params string[] extra)
    {
        string path = Path.GetTempFileName();
        try
        {
            File.WriteAllBytes(path, capture);
            return DumperGoldenTests.Run(["--pcap", path, .. extra]);
        }
        finally
        {
            File.Delete(path);
        }
    }

    private static byte[] BuildPcap(params (uint Seconds, uint Micros, byte[] Frame)[] records) => BuildPcap(1, records);

    private static byte[] BuildPcap(uint linkType, params (uint Seconds, uint Micros, byte[] Frame)[] records)
    {
        var file = new List<byte>();
        var header = new byte[24];
        BinaryPrimitives.WriteUInt32LittleEndian(header, 0xa1b2c3d4);
        BinaryPrimitives.WriteUInt16LittleEndian(header.AsSpan(4), 2);
        BinaryPrimitives.WriteUInt16LittleEndian(header.AsSpan(6), 4);
        BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(16), 65535);
        BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(20), linkType);
        file.AddRange(header);
        foreach ((uint seconds, uint micros, byte[] frame) in records)
        {
            var record = new byte[16];
            BinaryPrimitives.WriteUInt32LittleEndian(record, seconds);
            BinaryPrimitives.WriteUInt32LittleEndian(record.AsSpan(4), micros);
            BinaryPrimitives.WriteUInt32LittleEndian(record.AsSpan(8), (uint)frame.Length);
            BinaryPrimitives.WriteUInt32LittleEndian(record.AsSpan(12), (uint)frame.Length);
            file.AddRange(record);
            file.AddRange(frame);
        }

        return file.ToArray();
    }

    private static byte[] EthernetIPv4(byte[] source, ushort sourcePort, byte[] destination, ushort destinationPort, byte[] payload)
    {
        var frame = new byte[14 + 20 + 8 + payload.Length];
        frame[12] = 0x08; // EtherType IPv4
        Span<byte> ip = frame.AsSpan(14);
        ip[0] = 0x45;
        BinaryPrimitives.WriteUInt16BigEndian(ip.Slice(2), (ushort)(20 + 8 + payload.Length));
        ip[8] = 64;
        ip[9] = 17;
        source.CopyTo(ip.Slice(12));
        destination.CopyTo(ip.Slice(16));
        WriteUdp(ip.Slice(20), sourcePort, destinationPort, payload);
        return frame;
    }

    private static void WriteUdp(Span<byte> udp, ushort sourcePort, ushort destinationPort, byte[] payload)
    {
        BinaryPrimitives.WriteUInt16BigEndian(udp, sourcePort);
        BinaryPrimitives.WriteUInt16BigEndian(udp.Slice(2), destinationPort);
        BinaryPrimitives.WriteUInt16BigEndian(udp.Slice(4), (ushort)(8 + payload.Length));
        payload.CopyTo(udp.Slice(8));
    }

    private static byte[] Sll2IPv6(byte lastSource, ushort sourcePort, byte lastDestination, ushort destinationPort, byte[] payload)
    {
        var frame = new byte[20 + 40 + 8 + payload.Length];
        BinaryPrimitives.WriteUInt16BigEndian(frame, 0x86dd); // SLL2 protocol type
        Span<byte> ip = frame.AsSpan(20);
        ip[0] = 0x60;
        BinaryPrimitives.WriteUInt16BigEndian(ip.Slice(4), (ushort)(8 + payload.Length));
        ip[6] = 17;
        ip[7] = 64;
        byte[] prefix = [0x20, 0x01, 0x0d, 0xb8];
        prefix.CopyTo(ip.Slice(8));
        ip[23] = lastSource;
        prefix.CopyTo(ip.Slice(24));
        ip[39] = lastDestination;
        WriteUdp(ip.Slice(40), sourcePort, destinationPort, payload);
        return frame;
    }

    private static byte[] BuildPcapngSll2IPv6()
    {
        var file = new List<byte>();
        // Section Header Block: byte-order magic, version 1.0, section length -1.
        var shb = new byte[28];
        BinaryPrimitives.WriteUInt32LittleEndian(shb, 0x0a0d0d0a);
        BinaryPrimitives.WriteUInt32LittleEndian(shb.AsSpan(4), 28);
        BinaryPrimitives.WriteUInt32LittleEndian(shb.AsSpan(8), 0x1a2b3c4d);
        BinaryPrimitives.WriteUInt16LittleEndian(shb.AsSpan(12), 1);
        BinaryPrimitives.WriteInt64LittleEndian(shb.AsSpan(16), -1);
        BinaryPrimitives.WriteUInt32LittleEndian(shb.AsSpan(24), 28);
        file.AddRange(shb);
        // Interface Description Block: LINKTYPE_LINUX_SLL2 (276), if_tsresol = 9 (nanoseconds).
        var idb = new byte[32];
        BinaryPrimitives.WriteUInt32LittleEndian(idb, 1);
        BinaryPrimitives.WriteUInt32LittleEndian(idb.AsSpan(4), 32);
        BinaryPrimitives.WriteUInt16LittleEndian(idb.AsSpan(8), 276);
        BinaryPrimitives.WriteUInt32LittleEndian(idb.AsSpan(12), 0);
        BinaryPrimitives.WriteUInt16LittleEndian(idb.AsSpan(16), 9);
        BinaryPrimitives.WriteUInt16LittleEndian(idb.AsSpan(18), 1);
        idb[20] = 9;
        BinaryPrimitives.WriteUInt32LittleEndian(idb.AsSpan(28), 32);
        file.AddRange(idb);
        AddEnhancedPacket(file, 5_000_000_000UL, Sll2IPv6(1, 50000, 2, 443, s_client));
        AddEnhancedPacket(file, 5_000_250_000UL, Sll2IPv6(2, 443, 1, 50000, s_server));
        return file.ToArray();
    }

    private static void AddEnhancedPacket(List<byte> file, ulong timestamp, byte[] frame)
    {
        int padded = (frame.Length + 3) & ~3;
        int length = 32 + padded;
        var block = new byte[length];
        BinaryPrimitives.WriteUInt32LittleEndian(block, 6);
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(4), (uint)length);
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(8), 0);
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(12), (uint)(timestamp >> 32));
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(16), (uint)timestamp);
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(20), (uint)frame.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(24), (uint)frame.Length);
        frame.CopyTo(block.AsSpan(28));
        BinaryPrimitives.WriteUInt32LittleEndian(block.AsSpan(length - 4), (uint)length);
        file.AddRange(block);
    }
}
