using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Golden output of the RFC 9001 Appendix A.2/A.3 samples. Every value was checked by hand against the RFC:
/// packet numbers 2 and 1, Length 0x449e = 1182 and 0x4075 = 117, a 241-byte CRYPTO frame holding a 237-byte
/// ClientHello for "example.com" with ALPN "alpn" and 8 transport parameters, 917 bytes of PADDING (1182 - 4 - 16 -
/// 245), and the server's ACK of packet 0 plus an 86-byte ServerHello.</summary>
public sealed class DumperGoldenTests
{
    private const string ClientInitialGolden = """
        #1 len=1200
          [1] offset=0 Initial version=v1 DCID=8394c8f03e515708 SCID=(empty) token=(0 bytes) length=1182
            conn=1 from=client pn=2 pn_len=4
            CRYPTO offset=0 length=241
              TLS ClientHello length=237
                legacy_version=0x0303 random=ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c
                session_id=(empty)
                cipher_suites: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384
                extension server_name (0) length=16: "example.com"
                extension renegotiation_info (65281) length=1: 00
                extension supported_groups (10) length=8: x25519, secp256r1, secp384r1
                extension application_layer_protocol_negotiation (16) length=7: "alpn"
                extension status_request (5) length=5: 0100000000
                extension key_share (51) length=38: x25519 (32-byte key 9370b2c9caa47fba...)
                extension supported_versions (43) length=3: TLS 1.3
                extension signature_algorithms (13) length=16: ecdsa_secp256r1_sha256, ecdsa_secp384r1_sha384, ecdsa_secp521r1_sha512, ecdsa_sha1, rsa_pss_rsae_sha256, rsa_pss_rsae_sha384, rsa_pss_rsae_sha512
                extension psk_key_exchange_modes (45) length=2: psk_dhe_ke
                extension record_size_limit (28) length=2: 16385
                extension quic_transport_parameters (57) length=50:
                  0x04 initial_max_data = 4611686018427387903
                  0x05 initial_max_stream_data_bidi_local = 65535
                  0x07 initial_max_stream_data_uni = 65535
                  0x08 initial_max_streams_bidi = 16
                  0x01 max_idle_timeout = 30000
                  0x09 initial_max_streams_uni = 16
                  0x0f initial_source_connection_id = 8394c8f03e515708
                  0x06 initial_max_stream_data_bidi_remote = 65535
            PADDING length=917
        """;

    private const string ServerInitialGolden = """
        #1 len=135
          [1] offset=0 Initial version=v1 DCID=(empty) SCID=f067a5502a4262b5 token=(0 bytes) length=117
            conn=1 from=server pn=1 pn_len=2
            ACK largest=0 delay=0 range_count=1 first_range=0 ranges=[0]
            CRYPTO offset=0 length=90
              TLS ServerHello length=86
                legacy_version=0x0303 random=eefce7f7b37ba1d1632e96677825ddf73988cfc79825df566dc5430b9a045a12
                session_id=(empty)
                cipher_suite: TLS_AES_128_GCM_SHA256
                extension key_share (51) length=36: x25519 (32-byte key 9d3c940d89690b84...)
                extension supported_versions (43) length=2: TLS 1.3
        """;

    internal static string Run(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = DumperCommand.Run(args, output, error);
        Assert.True(exit == 0, $"exit {exit}: {error}");
        Assert.Equal("", error.ToString());
        return Normalize(output.ToString());
    }

    internal static string Normalize(string text) => text.Replace("\r\n", "\n").TrimEnd('\n');

    [Fact]
    public void ClientInitialSampleMatchesGolden()
    {
        Assert.Equal(Normalize(ClientInitialGolden), Run("--sample", "rfc9001-client-initial"));
    }

    [Fact]
    public void ServerInitialSampleMatchesGolden()
    {
        Assert.Equal(Normalize(ServerInitialGolden), Run("--sample", "rfc9001-server-initial"));
    }

    [Fact]
    public void ClientHelloShowsSniAlpnAndTransportParameters()
    {
        string text = Run("--sample", "rfc9001-client-initial");
        Assert.Contains("extension server_name (0) length=16: \"example.com\"", text);
        Assert.Contains("extension application_layer_protocol_negotiation (16) length=7: \"alpn\"", text);
        Assert.Contains("0x0f initial_source_connection_id = 8394c8f03e515708", text);
        Assert.Contains("0x01 max_idle_timeout = 30000", text);
        Assert.Contains("0x04 initial_max_data = 4611686018427387903", text);
    }

    [Fact]
    public void HexInputDecodesLikeTheSample()
    {
        string hex = Rfc9001Hex(SampleDatagrams.Rfc9001ClientInitial);
        Assert.Equal(Run("--sample", "rfc9001-client-initial"), Run("--hex", hex));
    }

    [Fact]
    public void ServerInitialWithoutOriginalDcidHasNoKeysButShowsHeader()
    {
        string hex = Rfc9001Hex(SampleDatagrams.Rfc9001ServerInitial);
        string text = Run("--hex", hex);
        Assert.Contains("Initial version=v1 DCID=(empty) SCID=f067a5502a4262b5 token=(0 bytes) length=117", text);
        Assert.Contains("(no keys", text);
        Assert.DoesNotContain("ServerHello", text);
        Assert.Contains("TLS ServerHello length=86", Run("--hex", hex, "--odcid", "8394c8f03e515708"));
    }

    [Fact]
    public void ClientThenServerInitialInOneFileShareTheConnection()
    {
        string path = Path.GetTempFileName();
        try
        {
            File.WriteAllText(path, "# RFC 9001 A.2 then A.3\n" + Rfc9001Hex(SampleDatagrams.Rfc9001ClientInitial) + "\n\n" +
                Rfc9001Hex(SampleDatagrams.Rfc9001ServerInitial) + "  # server\n");
            string text = Run("--file", path);
            Assert.Contains("#1 len=1200", text);
            Assert.Contains("#2 len=135", text);
            Assert.Contains("conn=1 from=client pn=2", text);
            Assert.Contains("conn=1 from=server pn=1", text);
            Assert.Contains("TLS ServerHello length=86", text);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void FrameFilterShowsOnlyThatFrameType()
    {
        string text = Run("--sample", "rfc9001-server-initial", "--frame", "ack");
        Assert.Contains("ACK largest=0 delay=0", text);
        Assert.DoesNotContain("CRYPTO", text);
        Assert.DoesNotContain("ServerHello", text);
        Assert.Contains("pn=1", text);
    }

    [Fact]
    public void CidFilterHidesOtherConnections()
    {
        Assert.Equal("", Run("--sample", "rfc9001-client-initial", "--cid", "0102030405060708"));
        Assert.Contains("ClientHello", Run("--sample", "rfc9001-client-initial", "--cid", "8394c8f03e515708"));
        Assert.Contains("ServerHello", Run("--sample", "rfc9001-server-initial", "--cid", "f067a5502a4262b5"));
    }

    internal static string Rfc9001Hex(string layout)
    {
        Assert.True(HexText.TryParse(layout, out byte[] bytes));
        return Convert.ToHexStringLower(bytes);
    }
}
