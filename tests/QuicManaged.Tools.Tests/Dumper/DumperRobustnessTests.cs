using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Malformed input: truncations, seeded random bytes and mutations of real datagrams. The formatter must never
/// throw (its catch-all counts any exception as an internal error) and must say what went wrong.</summary>
public sealed class DumperRobustnessTests
{
    private static readonly byte[] s_client = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial);
    private static readonly byte[] s_server = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ServerInitial);

    [Fact]
    public void EveryTruncationOfTheClientInitialIsReportedNotThrown()
    {
        var output = new StringWriter();
        using var formatter = new DatagramFormatter(output);
        for (int length = 0; length < s_client.Length; length += 7)
        {
            formatter.Format(new CapturedDatagram(null, null, null, s_client.AsSpan(0, length).ToArray()));
        }

        Assert.Equal(0, formatter.InternalErrorCount);
        string text = output.ToString();
        Assert.Contains("(empty datagram)", text);
        Assert.Contains("error: malformed long header at offset 0", text);
        Assert.DoesNotContain("ClientHello", text);
    }

    [Fact]
    public void CorruptedPayloadFailsAuthenticationAndLaterDatagramsStillDecode()
    {
        byte[] corrupted = (byte[])s_client.Clone();
        corrupted[600] ^= 0x40;
        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output))
        {
            formatter.Format(new CapturedDatagram(null, null, null, corrupted));
            formatter.Format(new CapturedDatagram(null, null, null, s_client));
            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string text = output.ToString();
        int second = text.IndexOf("#2 ", StringComparison.Ordinal);
        Assert.True(second > 0);
        Assert.Contains("(no keys", text.Substring(0, second));
        Assert.Contains("TLS ClientHello length=237", text.Substring(second));
    }

    [Fact]
    public void ThousandSeededRandomAndMutatedDatagramsNeverThrow()
    {
        var random = new Random(9001);
        var output = new StringWriter();
        using var formatter = new DatagramFormatter(output, new DumpOptions { CidLength = 8, OriginalDcid = Convert.FromHexString("8394c8f03e515708") });
        byte[][] seeds = [s_client, s_server, s_server.Concat(s_client).ToArray()];
        for (int i = 0; i < 1000; i++)
        {
            byte[] datagram;
            switch (i % 4)
            {
                case 0:
                    datagram = new byte[random.Next(0, 1400)];
                    random.NextBytes(datagram);
                    break;
                case 1:
                    // Random bytes behind a plausible long header first byte and version.
                    datagram = new byte[random.Next(5, 300)];
                    random.NextBytes(datagram);
                    datagram[0] = (byte)(0xc0 | random.Next(0, 64));
                    datagram[1] = 0; datagram[2] = 0; datagram[3] = 0; datagram[4] = (byte)random.Next(0, 2);
                    break;
                default:
                    byte[] seed = seeds[random.Next(seeds.Length)];
                    datagram = (byte[])seed.Clone();
                    int flips = random.Next(1, 8);
                    for (int f = 0; f < flips; f++) datagram[random.Next(datagram.Length)] ^= (byte)(1 << random.Next(8));
                    if (random.Next(3) == 0) datagram = datagram.AsSpan(0, random.Next(datagram.Length)).ToArray();
                    break;
            }

            formatter.Format(new CapturedDatagram(null, null, null, datagram));
        }

        Assert.Equal(1000, formatter.DatagramCount);
        Assert.Equal(0, formatter.InternalErrorCount);
        Assert.DoesNotContain("internal error", output.ToString());
    }

    [Fact]
    public void DecryptedGarbageFramesAreReportedAndStop()
    {
        // A valid Initial whose payload holds an unknown frame type 0x21 after a PING.
        using var keys = System.Net.Quic.Managed.Crypto.InitialKeys.Create(System.Net.Quic.Managed.Wire.QuicVersion.V1, Convert.FromHexString("0102030405060708"));
        byte[] packet = DumperPacketBuilder.Long(System.Net.Quic.Managed.Wire.PacketType.Initial, Convert.FromHexString("0102030405060708"), [], keys.Client, 0,
            Convert.FromHexString("01" + "21" + "0000000000000000"));
        byte[] truncatedCrypto = DumperPacketBuilder.Long(System.Net.Quic.Managed.Wire.PacketType.Initial, Convert.FromHexString("0102030405060708"), [], keys.Client, 1,
            Convert.FromHexString("06" + "00" + "40ff" + "0000000000"));
        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output))
        {
            formatter.Format(new CapturedDatagram(null, null, null, packet));
            formatter.Format(new CapturedDatagram(null, null, null, truncatedCrypto));
            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string text = output.ToString();
        Assert.Contains("    PING", text);
        Assert.Contains("error: unknown or truncated frame type at payload offset 1: 210000000000000000 (9 bytes undecoded)", text);
        Assert.Contains("error: malformed CRYPTO frame at payload offset 0: FRAME_ENCODING_ERROR", text);
    }

    [Fact]
    public void FrameWarningsFollowTheirFrame()
    {
        // In an Initial: PING with a two-byte type, then STREAM and MAX_DATA (neither allowed in Initial), then PADDING.
        using var keys = System.Net.Quic.Managed.Crypto.InitialKeys.Create(System.Net.Quic.Managed.Wire.QuicVersion.V1, Convert.FromHexString("0102030405060708"));
        byte[] packet = DumperPacketBuilder.Long(System.Net.Quic.Managed.Wire.PacketType.Initial, Convert.FromHexString("0102030405060708"), [], keys.Client, 0,
            Convert.FromHexString("4001" + "0a0402abcd" + "10" + "000000000000000000"));
        var output = new StringWriter();
        using (var formatter = new DatagramFormatter(output))
        {
            formatter.Format(new CapturedDatagram(null, null, null, packet));
            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string[] lines = output.ToString().Split('\n').Select(l => l.TrimEnd('\r')).ToArray();
        int ping = Array.FindIndex(lines, l => l == "    PING");
        Assert.True(ping >= 0, output.ToString());
        Assert.Equal("      warning: frame type not minimally encoded (PROTOCOL_VIOLATION, RFC 9000 §12.4)", lines[ping + 1]);
        Assert.StartsWith("    STREAM id=4 ", lines[ping + 2]);
        Assert.StartsWith("      warning: STREAM is not allowed in Initial packets", lines[ping + 3]);
        Assert.Equal("    MAX_DATA max=0", lines[ping + 4]);
        Assert.StartsWith("      warning: MAX_DATA is not allowed in Initial packets", lines[ping + 5]);
        Assert.StartsWith("    PADDING length=", lines[ping + 6]);
    }
}
