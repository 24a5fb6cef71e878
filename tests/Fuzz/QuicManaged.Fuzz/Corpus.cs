using System;
using System.IO;
using System.Net;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Fuzz;

/// <summary>
/// Writes the seed corpus (tests/Fuzz/corpus/TARGET/*): the RFC 9001 / RFC 9369 Appendix A vectors and messages,
/// frames and parameters the library itself encodes. Small on purpose: AFL grows its own queue from these.
/// </summary>
internal static class Corpus
{
    // The frame encodings of tests/System.Net.Quic.Managed.Tests/Wire/FrameTests.cs EveryFrame().
    private static readonly string[] EveryFrame =
    [
        "00000000", "01", "1e", "0224050003", "03240502030102000a0b0c0d", "0404400005", "054004c0000000000000ff", "060a03616263",
        "070474657374", "080400", "0b04020102", "0f044010030a0b0c", "0c0410aabb", "1080ffffff", "110122", "1201",
        "13c0000000000000ff", "1433", "150133", "1600", "1710", "18050304a1a2a3a400112233445566778899aabbccddeeff", "1907",
        "1a0102030405060708", "1b0102030405060708", "1c0a060568656c6c6f", "1d40640100", "30cafe", "3103010203",
    ];

    private static byte[] Hex(string hex) => Rfc9001Vectors.Hex(hex);

    private static byte[] Cat(params byte[][] parts)
    {
        var all = new List<byte>();
        foreach (byte[] part in parts) all.AddRange(part);
        return all.ToArray();
    }

    private static byte[] Record(byte kind, byte[] body) => Cat([kind, (byte)(body.Length >> 8), (byte)body.Length], body);

    public static void Write(string root)
    {
        void Put(string target, string name, byte[] data)
        {
            string directory = Path.Combine(root, target);
            Directory.CreateDirectory(directory);
            File.WriteAllBytes(Path.Combine(directory, name), data);
        }

        // ---- packet ----
        Put("packet", "rfc9001-a2-client-initial", Hex(Rfc9001Vectors.V1ClientProtected));
        Put("packet", "rfc9001-a3-server-initial", Hex(Rfc9001Vectors.V1ServerProtected));
        Put("packet", "rfc9369-a3-server-initial-v2", Hex(Rfc9001Vectors.V2ServerProtected));
        Put("packet", "rfc9001-a4-retry", Hex(Rfc9001Vectors.V1Retry));
        Put("packet", "rfc9369-a4-retry-v2", Hex(Rfc9001Vectors.V2Retry));
        Put("packet", "rfc9001-a5-chacha-short", Hex(Rfc9001Vectors.V1ChaChaPacket));
        Put("packet", "version-negotiation", Hex("ff00000000030102030204056b3343cf000000011a2a3a4a"));
        Put("packet", "coalesced-initial-handshake-1rtt", Coalesced());

        // ---- frames ----
        for (int i = 0; i < EveryFrame.Length; i++) Put("frames", $"frame-{EveryFrame[i][..2]}-{i:D2}", Hex(EveryFrame[i]));
        Put("frames", "rfc9001-a3-server-payload", Hex(Rfc9001Vectors.ServerPayload));

        // ---- transport-parameters ---- (byte 0 bit 0: sent by the server)
        Put("transport-parameters", "rfc9001-a2-client", Cat([0], Hex("0408ffffffffffffffff05048000ffff07048000ffff0801100104800075300901100f088394c8f03e51570806048000ffff")));
        Put("transport-parameters", "every-parameter-server", Cat([1], EveryParameter().Encode()!));

        // ---- tls ---- (byte 0 mod 7 selects the message; the body follows the 4-byte handshake header)
        byte[] clientCrypto = Hex(Rfc9001Vectors.ClientCryptoFrame);
        Put("tls", "0-client-hello-rfc9001-a2", Cat([0], clientCrypto[8..]));
        Put("tls", "1-server-hello-rfc9001-a3", Cat([1], Hex(Rfc9001Vectors.ServerPayload)[13..]));
        Put("tls", "2-encrypted-extensions", Cat([2], Body(w => new EncryptedExtensions
        {
            ApplicationProtocol = "h3"u8.ToArray(), TransportParameters = EveryParameter().Encode(), ServerNameAcknowledged = true, EarlyData = true,
        }.Encode(w))));
        Put("tls", "3-certificate", Cat([3], Body(w => new CertificateMessage { Certificates = { new byte[] { 0x30, 0x03, 0x02, 0x01, 0x01 } } }.Encode(w))));
        Put("tls", "4-certificate-verify", Cat([4], Body(w => new CertificateVerifyMessage { Scheme = 0x0804, Signature = new byte[32] }.Encode(w))));
        Put("tls", "5-new-session-ticket", Cat([5], Body(w => new NewSessionTicket
        {
            LifetimeSeconds = 7200, AgeAdd = 12345, Nonce = [0], Ticket = new byte[48], MaxEarlyDataSize = 0xffffffff,
        }.Encode(w))));
        Put("tls", "6-certificate-request", Cat([6], Body(w => new CertificateRequest { SignatureAlgorithms = { 0x0804, 0x0403 } }.Encode(w))));

        // ---- endpoint-client ---- (records kind(1) length(2) body; the fuzzer plays the server)
        Put("endpoint-client", "handshake-streams", ClientEndpointTarget.HandshakeSeed(
            Hex("0b0101610f0000026f6b" + "0704aabbccdd" + "18010008a1a2a3a4a5a6a7a800112233445566778899aabbccddeeff")));
        byte[] handshakeOnly = ClientEndpointTarget.HandshakeSeed(Hex("01"));
        Put("endpoint-client", "handshake-then-close", Cat(handshakeOnly, Record(0x13, Hex("1c0a0600"))));
        Put("endpoint-client", "retry", Record(0, RetryFor()));
        Put("endpoint-client", "version-negotiation", Record(0, VersionNegotiationFor()));

        // ---- tls-server / tls-client ---- (records level(1) length(2) data: a real handshake's flights)
        (byte[] clientFlight, byte[] serverFlight) = TlsEngineTargets.RecordHandshake();
        Put("tls-server", "client-flight", clientFlight);
        Put("tls-server", "rfc9001-a2-client-hello", Cat([0, 0, (byte)(clientCrypto.Length - 4)], clientCrypto[4..]));
        Put("tls-client", "server-flight", serverFlight);
        byte[] serverCrypto = Hex(Rfc9001Vectors.ServerPayload)[9..];
        Put("tls-client", "rfc9001-a3-server-hello", Cat([0, 0, (byte)serverCrypto.Length], serverCrypto));

        // ---- token ---- (mode 0: raw token; 1: sealed Retry token; 2: sealed NEW_TOKEN; 0x80: validated from another address)
        byte[] fields = Cat(BigEndian(1_000_000), BigEndian(2_000_000), [8, 8], Hex("8394c8f03e515708f067a5502a4262b5"));
        Put("token", "raw", Cat([0], new byte[12 + 11 + 16]));
        Put("token", "retry", Cat([1], fields));
        Put("token", "new-token", Cat([2], fields));
        Put("token", "retry-other-address", Cat([0x81], fields));

        // ---- client-hello-peek ---- (bit 0: seal the rest as Initial frames; bit 1: split over two packets)
        Put("client-hello-peek", "rfc9001-a2-datagram", Cat([0], Hex(Rfc9001Vectors.V1ClientProtected)));
        Put("client-hello-peek", "sealed-rfc9001-a2-crypto", Cat([1], clientCrypto));
        (byte[] head, byte[] tail) = SplitCrypto(clientCrypto[4..], 100);
        Put("client-hello-peek", "sealed-split-crypto", Cat([3, (byte)tail.Length], tail, head));

        // ---- endpoint ---- (byte 0 bit 0: complete the handshake first; then kind(1) length(2) body records)
        byte[] stream = Hex("0f00000568656c6c6f");       // STREAM 0, offset 0, length 5, FIN, "hello"
        byte[] uniStream = Hex("0a02036162630100");       // STREAM 2 (uni), LEN, "abc"; PING; PADDING
        byte[] control = Hex("1080ffffff11004400120a1a0102030405060708");
        byte[] newCid = Hex("18040108a1a2a3a4a5a6a7a800112233445566778899aabbccddeeff");
        Put("endpoint", "established-streams", Cat([1], Record(3, stream), Record(3, uniStream), Record(0x13, control), Record(3, newCid)));
        Put("endpoint", "established-migration", Cat([1], Record(7, Hex("1a010203040506070801")), Record(0x23, Hex("1c0a0600"))));
        Put("endpoint", "handshake-finish", Cat([0], Record(1, Hex("01")), Record(2, Hex("0600230500 20".Replace(" ", "") + new string('0', 64))),
            Record(3, stream)));
        Put("endpoint", "raw-datagrams", Cat([1], Record(0, Hex(Rfc9001Vectors.V1Retry)), Record(0, Hex("c0ff00000108" + "0102030405060708" + "00" + "0000")),
            Record(0x10, Hex(Rfc9001Vectors.V1ChaChaPacket))));

        WriteHttpAndCapture(Put);
    }


    /// <summary>Seeds for the http3, qpack and capture targets.</summary>
    private static void WriteHttpAndCapture(Action<string, string, byte[]> put)
    {
        var request = new List<QuicManaged.Http.Qpack.HeaderField>
        {
            new(":method", "POST"), new(":scheme", "https"), new(":authority", "example.com"), new(":path", "/upload?x=1"),
            new("content-type", "application/octet-stream"), new("x-custom", "some value"),
        };
        byte[] section = QuicManaged.Http.Qpack.QpackEncoder.Encode(request);

        // ---- http3 ---- (byte 0 mod 3: 0 a server's uni stream seen by the client, 1 a client's seen by the server, 2 a request stream)
        byte[] settings = new QuicManaged.Http.Framing.Http3Settings { MaxFieldSectionSize = 16384 }.EncodeFrame();
        put("http3", "0-control-settings-goaway", Cat([0, 0x00], settings, QuicManaged.Http.Framing.Http3FrameCodec.EncodeSingleIntegerFrame(0x07, 4)));
        put("http3", "1-control-settings-max-push-id", Cat([1, 0x00], settings, QuicManaged.Http.Framing.Http3FrameCodec.EncodeSingleIntegerFrame(0x0d, 8)));
        put("http3", "1-qpack-encoder-stream", Cat([1, 0x02], Hex("20")));
        put("http3", "0-qpack-decoder-stream", Cat([0, 0x03], Hex("0001")));
        put("http3", "2-request-headers-data", Cat([2], QuicManaged.Http.Framing.Http3Message.EncodeHeadersFrame(request),
            QuicManaged.Http.Framing.Http3FrameCodec.EncodeFrame(0x00, "hello"u8), Hex("2103616263")));

        // ---- qpack ---- (one field section)
        put("qpack", "request", section);
        put("qpack", "rfc9204-b1-literal-name-reference", Hex("0000510b2f696e6465782e68746d6c"));

        // ---- qpack-session ---- (records kind(1) length(2) body: 0 encoder stream, 1 field section on stream 4*body[0], 2 reset, 3 take decoder bytes)
        static byte[] R(byte kind, byte[] body) => Cat([kind, (byte)(body.Length >> 8), (byte)body.Length], body);
        // RFC 9204 B.2: Set Dynamic Table Capacity 220, two inserts; then the section referencing them (stream 4), acknowledged.
        put("qpack-session", "rfc9204-b2-insert-then-reference", Cat(
            R(0, Hex("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468")),
            R(1, Cat([1], Hex("03811011"))), R(3, [])));
        // The section first (blocked on inserts that arrive later), then the inserts, then a reset of another stream.
        put("qpack-session", "blocked-then-unblocked", Cat(
            R(1, Cat([2], Hex("03811011"))),
            R(0, Hex("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468")),
            R(2, [7]), R(3, [])));

        // ---- capture ---- (byte 0 mod 3: 0 pcap/pcapng, 1 nettrace, 2 one raw datagram)
        byte[] initial = Hex(Rfc9001Vectors.V1ClientProtected);
        put("capture", "0-pcap-ethernet-ipv4-udp-initial", Cat([0], Pcap(initial)));
        put("capture", "1-nettrace-header", Cat([1], "Nettrace"u8.ToArray(), [20, 0, 0, 0], "!FastSerialization.1"u8.ToArray()));
        put("capture", "2-raw-rfc9001-client-initial", Cat([2], initial));
        put("capture", "2-raw-rfc9001-server-initial", Cat([2], Hex(Rfc9001Vectors.V1ServerProtected)));
    }

    /// <summary>A libpcap file (Ethernet link type) with one IPv4/UDP frame from 127.0.0.1:50000 to 127.0.0.1:443.</summary>
    private static byte[] Pcap(byte[] payload)
    {
        byte[] global = Cat(LittleEndian(0xa1b2c3d4), [2, 0, 4, 0], new byte[8], LittleEndian(65535), LittleEndian(1));
        int udpLength = 8 + payload.Length;
        int ipLength = 20 + udpLength;
        byte[] ethernet = Cat(new byte[12], [0x08, 0x00]);
        byte[] ip = Cat([0x45, 0, (byte)(ipLength >> 8), (byte)ipLength, 0, 0, 0x40, 0, 64, 17, 0, 0], [127, 0, 0, 1], [127, 0, 0, 1]);
        byte[] udp = [0xc3, 0x50, 0x01, 0xbb, (byte)(udpLength >> 8), (byte)udpLength, 0, 0];
        byte[] frame = Cat(ethernet, ip, udp, payload);
        byte[] record = Cat(LittleEndian(1_700_000_000), LittleEndian(0), LittleEndian((uint)frame.Length), LittleEndian((uint)frame.Length));
        return Cat(global, record, frame);
    }

    private static byte[] LittleEndian(uint value) => [(byte)value, (byte)(value >> 8), (byte)(value >> 16), (byte)(value >> 24)];

    /// <summary>A Retry to the harness client (its connection IDs are deterministic), with a valid integrity tag.</summary>
    private static byte[] RetryFor()
    {
        byte[] odcid = ClientEndpointTarget.LearnConnectionIds(out byte[] clientScid);
        byte[] buffer = new byte[256];
        var writer = new QuicWriter(buffer);
        Check(RetryPacket.TryWriteWithoutTag(ref writer, QuicVersion.V1, clientScid, ClientEndpointTarget.ServerCid, "token"u8));
        int length = writer.Position;
        Check(RetryIntegrity.TryComputeTag(QuicVersion.V1, odcid, buffer.AsSpan(0, length), buffer.AsSpan(length, RetryPacket.IntegrityTagLength)));
        return buffer[..(length + RetryPacket.IntegrityTagLength)];
    }

    private static byte[] VersionNegotiationFor()
    {
        byte[] odcid = ClientEndpointTarget.LearnConnectionIds(out byte[] clientScid);
        byte[] buffer = new byte[256];
        var writer = new QuicWriter(buffer);
        Check(VersionNegotiationPacket.TryWrite(ref writer, clientScid, odcid, [0x1a2a3a4a, QuicVersion.V2], 0xc0));
        return buffer[..writer.Position];
    }

    private static byte[] BigEndian(long value)
    {
        byte[] bytes = new byte[8];
        System.Buffers.Binary.BinaryPrimitives.WriteInt64BigEndian(bytes, value);
        return bytes;
    }

    private static byte[] Body(Action<TlsWriter> encode)
    {
        var writer = new TlsWriter();
        encode(writer);
        return writer.ToArray()[4..];
    }

    /// <summary>A ClientHello as two CRYPTO frames: offset 0 up to <paramref name="at"/>, and the rest.</summary>
    private static (byte[] Head, byte[] Tail) SplitCrypto(byte[] hello, int at)
    {
        byte[] head = Cat(Hex("0600"), Varint(at), hello[..at]);
        byte[] tail = Cat([0x06], Varint(at), Varint(hello.Length - at), hello[at..]);
        Check(tail.Length <= 255);
        return (head, tail);
    }

    private static byte[] Varint(int value)
    {
        byte[] buffer = new byte[8];
        Check(VariableLengthInteger.TryWrite(buffer, (ulong)value, VariableLengthInteger.GetEncodedLength((ulong)value)));
        return buffer[..VariableLengthInteger.GetEncodedLength((ulong)value)];
    }

    private static void Check(bool condition)
    {
        if (!condition) throw new InvalidOperationException("corpus generation failed");
    }

    private static byte[] Coalesced()
    {
        byte[] buffer = new byte[1500];
        using InitialKeys initial = InitialKeys.Create(QuicVersion.V1, Sealer.Rfc9001Dcid);
        using PacketProtectionKeys handshake = Sealer.FakeKeys("c hs", QuicVersion.V1);
        using PacketProtectionKeys oneRtt = Sealer.FakeKeys("c ap", QuicVersion.V1);
        int length = Sealer.Long(buffer, PacketType.Initial, QuicVersion.V1, Sealer.Rfc9001Dcid, [1, 2], [], initial.Client, 0, Hex("060005aabbccddee01"), 0);
        length += Sealer.Long(buffer.AsSpan(length), PacketType.Handshake, QuicVersion.V1, Sealer.Rfc9001Dcid, [1, 2], [], handshake, 0, Hex("0200000000"), 0);
        length += Sealer.Short(buffer.AsSpan(length), Sealer.Rfc9001Dcid, oneRtt, 0, Hex("0f00000568656c6c6f"));
        Check(length > 0);
        return buffer[..length];
    }

    private static TransportParameters EveryParameter() => new()
    {
        OriginalDestinationConnectionId = [1, 2, 3, 4, 5, 6, 7, 8],
        MaxIdleTimeoutMs = 30000,
        StatelessResetToken = Convert.FromHexString("00112233445566778899aabbccddeeff"),
        MaxUdpPayloadSize = 1500,
        InitialMaxData = 1 << 20,
        InitialMaxStreamDataBidiLocal = 1000,
        InitialMaxStreamDataBidiRemote = 2000,
        InitialMaxStreamDataUni = 3000,
        InitialMaxStreamsBidi = 100,
        InitialMaxStreamsUni = 1UL << 60,
        AckDelayExponent = 20,
        MaxAckDelayMs = (1 << 14) - 1,
        DisableActiveMigration = true,
        PreferredAddress = new PreferredAddress
        {
            IPv4Address = IPAddress.Parse("192.0.2.1"),
            IPv4Port = 4433,
            IPv6Address = IPAddress.Parse("2001:db8::1"),
            IPv6Port = 4434,
            ConnectionId = [9, 8, 7],
            StatelessResetToken = Convert.FromHexString("ffeeddccbbaa99887766554433221100"),
        },
        ActiveConnectionIdLimit = 8,
        InitialSourceConnectionId = [],
        RetrySourceConnectionId = [0xaa, 0xbb],
        MaxDatagramFrameSize = 65535,
        GreaseQuicBit = true,
    };
}
