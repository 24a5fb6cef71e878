using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Retry (RFC 9001 A.4), Version Negotiation and unknown-version packets.</summary>
public sealed class DumperPacketKindTests
{
    [Fact]
    public void RetryAfterTheClientInitialIsVerifiedAndRekeysTheConnection()
    {
        byte[] retrySourceCid = Convert.FromHexString("f067a5502a4262b5");
        using InitialKeys afterRetry = InitialKeys.Create(QuicVersion.V1, retrySourceCid);
        byte[] secondInitial = DumperPacketBuilder.Long(PacketType.Initial, retrySourceCid, [], afterRetry.Client, 3,
            Convert.FromHexString("01" + new string('0', 40)));

        string text = Format(
            Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial),
            Rfc9001Vectors.Hex(Rfc9001Vectors.V1Retry),
            secondInitial);
        Assert.Contains("Retry version=v1 DCID=(empty) SCID=f067a5502a4262b5 len=36", text);
        Assert.Contains("retry_token=(5 bytes) 746f6b656e integrity_tag=04a265ba2eff4d829058fb3f0f2496ba", text);
        Assert.Contains("conn=1 integrity tag valid (original DCID 8394c8f03e515708)", text);
        Assert.Contains("Initial version=v1 DCID=f067a5502a4262b5 SCID=(empty) token=(0 bytes)", text);
        Assert.Contains("conn=1 from=client pn=3 pn_len=2", text);
        Assert.DoesNotContain("conn=2", text);
    }

    [Fact]
    public void RetryWithWrongOriginalDcidIsInvalid()
    {
        string text = Format(new DumpOptions { OriginalDcid = Convert.FromHexString("0001020304050607") }, Rfc9001Vectors.Hex(Rfc9001Vectors.V1Retry));
        Assert.Contains("integrity tag INVALID for --odcid 0001020304050607", text);
        Assert.Contains("(integrity not checked", Format(Rfc9001Vectors.Hex(Rfc9001Vectors.V1Retry)));
    }

    [Fact]
    public void VersionNegotiationListsVersions()
    {
        string text = Format(Convert.FromHexString("80" + "00000000" + "04" + "01020304" + "02" + "0506" + "00000001" + "6b3343cf" + "1a2a3a4a"));
        Assert.Contains("VersionNegotiation version=0x00000000 DCID=01020304 SCID=0506 len=25", text);
        Assert.Contains("supported versions: v1, v2, 0x1a2a3a4a (reserved)", text);

        string malformed = Format(Convert.FromHexString("80" + "00000000" + "00" + "00" + "000001"));
        Assert.Contains("error: malformed Version Negotiation packet", malformed);
    }

    [Fact]
    public void UnknownVersionShowsInvariantFieldsOnly()
    {
        string text = Format(Convert.FromHexString("c0" + "ff00001d" + "02" + "aabb" + "01" + "cc" + "00112233"));
        Assert.Contains("UnknownVersion version=0xff00001d DCID=aabb SCID=cc len=14", text);
        Assert.Contains("only the RFC 8999 invariant fields are known", text);
    }

    [Fact]
    public void ShortHeaderOfUnknownConnectionNeedsCidLength()
    {
        byte[] packet = Convert.FromHexString("41" + "0102030405060708" + new string('7', 60));
        Assert.Contains("DCID=(length unknown", Format(packet));
        string withLength = Format(new DumpOptions { CidLength = 8 }, packet);
        Assert.Contains("1-RTT DCID=0102030405060708 len=39 spin=0", withLength);
        Assert.Contains("(no keys: connection unknown); if a Stateless Reset, token=77777777777777777777777777777777", withLength);
    }

    [Fact]
    public void TrailingZerosAndMismatchedCoalescedDcidsAreFlagged()
    {
        byte[] client = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial);
        byte[] server = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ServerInitial);
        string padded = Format(server.Concat(new byte[40]).ToArray());
        Assert.Contains("[2] offset=135 40 zero bytes after the last packet (datagram padding, not a QUIC packet)", padded);

        string mixed = Format(client.AsSpan(0, 1200).ToArray(), server.Concat(client).ToArray());
        Assert.Contains("warning: packet 2 DCID differs from the first packet's; receivers drop it (RFC 9000 §12.2)", mixed);
        Assert.DoesNotContain("warning: packet 2 DCID differs", Format(client));
    }

    [Fact]
    public void CryptoFrameFilterStillShowsTlsMessages()
    {
        var output = new StringWriter();
        using var formatter = new DatagramFormatter(output, new DumpOptions { FrameFilter = "crypto" });
        formatter.Format(new CapturedDatagram(null, null, null, Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial)));
        string text = output.ToString();
        Assert.Contains("TLS ClientHello length=237", text);
        Assert.DoesNotContain("PADDING", text);
    }

    private static string Format(params byte[][] datagrams) => Format(new DumpOptions(), datagrams);

    private static string Format(DumpOptions options, params byte[][] datagrams)
    {
        var output = new StringWriter();
        using var formatter = new DatagramFormatter(output, options);
        foreach (byte[] datagram in datagrams)
        {
            formatter.Format(new CapturedDatagram(null, null, null, datagram));
        }

        Assert.Equal(0, formatter.InternalErrorCount);
        return output.ToString();
    }
}
