using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Handshake and 1-RTT decryption with an NSS key log keyed by the ClientHello random of RFC 9001 A.2, plus
/// CRYPTO reassembly across packets.</summary>
public sealed class DumperKeyLogTests
{
    // The ClientHello random inside the RFC 9001 A.2 client Initial.
    private const string ClientRandom = "ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c";
    private static readonly byte[] s_serverCid = Convert.FromHexString("f067a5502a4262b5");
    private static readonly byte[] s_serverHandshakeSecret = Filled(0x11);
    private static readonly byte[] s_clientTrafficSecret = Filled(0x22);
    private static readonly byte[] s_serverTrafficSecret = Filled(0x33);

    [Fact]
    public void KeyLogDecryptsHandshakeAndOneRttPackets()
    {
        using PacketProtectionKeys serverHandshake = PacketProtectionKeys.Create(s_serverHandshakeSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        using PacketProtectionKeys clientOneRtt = PacketProtectionKeys.Create(s_clientTrafficSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        using PacketProtectionKeys serverOneRtt = PacketProtectionKeys.Create(s_serverTrafficSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        using PacketProtectionKeys serverOneRttNext = serverOneRtt.CreateNextGeneration();

        // EncryptedExtensions: ALPN "h3" and transport parameters (max_idle_timeout = 1000, original DCID).
        byte[] encryptedExtensions = BuildEncryptedExtensions();
        byte[] handshake = DumperPacketBuilder.Long(PacketType.Handshake, [], s_serverCid, serverHandshake, 0,
            DumperPacketBuilder.CryptoFrameBytes(0, encryptedExtensions));

        byte[] clientPayload = Convert.FromHexString(
            "0b" + "00" + "05" + "68656c6c6f" +          // STREAM id 0, LEN+FIN, "hello"
            "02" + "0a" + "00" + "02" + "02" + "01" + "02" + "00" + "01" + // ACK largest 10, ranges 8-10, 3-5, 0-1
            "1c" + "4128" + "06" + "03" + "626164");     // CONNECTION_CLOSE 0x128 (alert 40) frame CRYPTO "bad"
        byte[] clientOneRttPacket = DumperPacketBuilder.Short(s_serverCid, clientOneRtt, 0, clientPayload);
        byte[] serverOneRttPacket = DumperPacketBuilder.Short([], serverOneRtt, 0, Convert.FromHexString("1e01"));
        byte[] serverKeyUpdatePacket = DumperPacketBuilder.Short([], serverOneRttNext, 1, Convert.FromHexString("01000000"), keyPhase: true);

        string keyLog = $"""
            # comment
            SERVER_HANDSHAKE_TRAFFIC_SECRET {ClientRandom} {Convert.ToHexStringLower(s_serverHandshakeSecret)}
            CLIENT_TRAFFIC_SECRET_0 {ClientRandom} {Convert.ToHexStringLower(s_clientTrafficSecret)}
            SERVER_TRAFFIC_SECRET_0 {ClientRandom} {Convert.ToHexStringLower(s_serverTrafficSecret)}
            garbage line
            """;

        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output, new DumpOptions(), KeyLog.Parse(keyLog)))
        {
            formatter.Format(new CapturedDatagram(null, null, null, Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial)));
            formatter.Format(new CapturedDatagram(null, null, null, Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ServerInitial).Concat(handshake).ToArray()));
            formatter.Format(new CapturedDatagram(null, null, null, clientOneRttPacket));
            formatter.Format(new CapturedDatagram(null, null, null, serverOneRttPacket));
            formatter.Format(new CapturedDatagram(null, null, null, serverKeyUpdatePacket));
            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string text = output.ToString();
        Assert.Contains("[2] offset=135 Handshake version=v1 DCID=(empty) SCID=f067a5502a4262b5 length=", text);
        Assert.Contains("conn=1 from=server pn=0 pn_len=2", text);
        Assert.Contains("TLS EncryptedExtensions length=", text);
        Assert.Contains("extension application_layer_protocol_negotiation (16) length=5: \"h3\"", text);
        Assert.Contains("0x01 max_idle_timeout = 1000", text);
        Assert.Contains("1-RTT DCID=f067a5502a4262b5", text);
        Assert.Contains("conn=1 from=client pn=0 pn_len=2 key_phase=0", text);
        Assert.Contains("STREAM id=0 (client bidi) offset=0 length=5 fin=1 data=\"hello\"", text);
        Assert.Contains("ACK largest=10 delay=0 range_count=3 first_range=2 ranges=[8-10, 3-5, 0-1]", text);
        Assert.Contains("CONNECTION_CLOSE (transport) error=0x128 CRYPTO_ERROR (TLS alert 40 handshake_failure) frame_type=0x6 reason=\"bad\"", text);
        Assert.Contains("1-RTT DCID=(empty)", text);
        Assert.Contains("HANDSHAKE_DONE", text);
        Assert.Contains("conn=1 from=server pn=1 pn_len=2 key_phase=1", text);
        Assert.DoesNotContain("(no keys", text);
        Assert.DoesNotContain("decryption failed", text);
    }

    [Fact]
    public void WithoutKeyLogHandshakeAndOneRttShowHeadersAndNoKeys()
    {
        using PacketProtectionKeys serverHandshake = PacketProtectionKeys.Create(s_serverHandshakeSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        byte[] handshake = DumperPacketBuilder.Long(PacketType.Handshake, [], s_serverCid, serverHandshake, 0, DumperPacketBuilder.CryptoFrameBytes(0, BuildEncryptedExtensions()));
        using PacketProtectionKeys clientOneRtt = PacketProtectionKeys.Create(s_clientTrafficSecret, TlsCipherSuite.TLS_AES_128_GCM_SHA256, QuicVersion.V1);
        byte[] oneRtt = DumperPacketBuilder.Short(s_serverCid, clientOneRtt, 0, Convert.FromHexString("01000000"));

        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output))
        {
            formatter.Format(new CapturedDatagram(null, null, null, Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial)));
            formatter.Format(new CapturedDatagram(null, null, null, Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ServerInitial).Concat(handshake).ToArray()));
            formatter.Format(new CapturedDatagram(null, null, null, oneRtt));
            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string text = output.ToString();
        Assert.Contains("TLS ServerHello length=86", text);
        Assert.Contains("Handshake version=v1 DCID=(empty) SCID=f067a5502a4262b5", text);
        Assert.Contains("(no keys: Handshake secrets for this connection are not in the key log)", text);
        // The DCID length of the short header was learned from the server's SCID.
        Assert.Contains("1-RTT DCID=f067a5502a4262b5", text);
        Assert.Contains("(no keys: OneRtt secrets for this connection are not in the key log)", text);
    }

    [Fact]
    public void ClientHelloSplitAcrossTwoInitialPacketsIsReassembled()
    {
        byte[] clientHello = Rfc9001Vectors.Hex(Rfc9001Vectors.ClientCryptoFrame).AsSpan(4).ToArray(); // strip 06 00 40f1
        Assert.Equal(241, clientHello.Length);
        byte[] dcid = Convert.FromHexString("0001020304050607");
        using InitialKeys keys = InitialKeys.Create(QuicVersion.V1, dcid);
        // Second half first: reassembly must hold it until the gap fills.
        byte[] second = DumperPacketBuilder.Long(PacketType.Initial, dcid, [0xaa], keys.Client, 1, DumperPacketBuilder.CryptoFrameBytes(100, clientHello.AsSpan(100)));
        byte[] first = DumperPacketBuilder.Long(PacketType.Initial, dcid, [0xaa], keys.Client, 0, DumperPacketBuilder.CryptoFrameBytes(0, clientHello.AsSpan(0, 100)));

        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output))
        {
            formatter.Format(new CapturedDatagram(null, null, null, second));
            string afterFirstDatagram = output.ToString();
            Assert.Contains("CRYPTO offset=100 length=141", afterFirstDatagram);
            Assert.DoesNotContain("ClientHello", afterFirstDatagram);
            formatter.Format(new CapturedDatagram(null, null, null, first));
        }

        string text = output.ToString();
        Assert.Contains("CRYPTO offset=0 length=100\n      TLS ClientHello length=237", text.Replace("\r\n", "\n"));
        Assert.Contains("\"example.com\"", text);
        Assert.Single(text.Split("TLS ClientHello").Skip(1));
    }

    [Fact]
    public void CryptoStreamBufferDeliversMessagesInOrderAndIgnoresDuplicates()
    {
        var buffer = new CryptoStreamBuffer();
        byte[] messages = Convert.FromHexString("1400000301020314000001ff");
        buffer.Add(6, messages.AsSpan(6));
        Assert.False(buffer.TryTakeMessage(out _));
        buffer.Add(0, messages.AsSpan(0, 3));
        buffer.Add(0, messages.AsSpan(0, 2));
        Assert.False(buffer.TryTakeMessage(out _));
        buffer.Add(3, messages.AsSpan(3, 4));
        Assert.True(buffer.TryTakeMessage(out byte[] firstMessage));
        Assert.Equal("14000003010203", Convert.ToHexStringLower(firstMessage));
        Assert.True(buffer.TryTakeMessage(out byte[] secondMessage));
        Assert.Equal("14000001ff", Convert.ToHexStringLower(secondMessage));
        Assert.False(buffer.TryTakeMessage(out _));
        Assert.Equal(12UL, buffer.ContiguousEnd);
    }

    [Fact]
    public void HugeClaimedMessageLengthMarksStreamBrokenWithoutAllocating()
    {
        var buffer = new CryptoStreamBuffer();
        buffer.Add(0, Convert.FromHexString("01ffffff00"));
        Assert.False(buffer.TryTakeMessage(out _));
        Assert.True(buffer.Broken);
        buffer.Add(1UL << 61, new byte[10]);
        Assert.Equal(5UL, buffer.ContiguousEnd);
    }

    [Fact]
    public void TransportErrorNames()
    {
        Assert.Equal("PROTOCOL_VIOLATION", QuicNames.TransportError(0x0a));
        Assert.Equal("NO_VIABLE_PATH", QuicNames.TransportError(0x10));
        Assert.Equal("CRYPTO_ERROR (TLS alert 120 no_application_protocol)", QuicNames.TransportError(0x178));
        Assert.Equal("unknown", QuicNames.TransportError(0x200));
    }

    private static byte[] BuildEncryptedExtensions()
    {
        // RFC 8446 §4.3.1 EncryptedExtensions with ALPN (16) "h3" and quic_transport_parameters (57).
        byte[] alpn = Convert.FromHexString("0010" + "0005" + "0003" + "02" + "6833");
        byte[] parameters = Convert.FromHexString("0039" + "000e" + "01" + "02" + "43e8" + "00" + "08" + "8394c8f03e515708");
        byte[] extensions = alpn.Concat(parameters).ToArray();
        int bodyLength = 2 + extensions.Length;
        byte[] header = [0x08, 0, (byte)(bodyLength >> 8), (byte)bodyLength, (byte)(extensions.Length >> 8), (byte)extensions.Length];
        return header.Concat(extensions).ToArray();
    }

    private static byte[] Filled(byte value)
    {
        var secret = new byte[32];
        secret.AsSpan().Fill(value);
        return secret;
    }
}
