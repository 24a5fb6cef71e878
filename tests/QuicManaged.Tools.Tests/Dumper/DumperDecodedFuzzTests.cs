using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Wire;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Fuzzing behind the AEAD: random plaintexts and mutated ClientHellos sealed with real Initial keys, so the
/// frame and TLS decoders (not just header parsing) see hostile bytes; plus mutated captures and key logs.</summary>
public sealed class DumperDecodedFuzzTests
{
    [Fact]
    public void RandomFramesAndMutatedClientHellosInsideValidInitialsNeverThrow()
    {
        var random = new Random(1200);
        byte[] clientHello = Rfc9001Vectors.Hex(Rfc9001Vectors.ClientCryptoFrame).AsSpan(4).ToArray();
        var output = new StringWriter();
        int decoded = 0;
        using (var formatter = new DatagramFormatter(output))
        {
            for (int i = 0; i < 600; i++)
            {
                byte[] dcid = new byte[8];
                random.NextBytes(dcid);
                byte[] payload;
                if (i % 2 == 0)
                {
                    payload = new byte[random.Next(2, 200)];
                    random.NextBytes(payload);
                    // Bias toward known frame types so their bodies, not just the type check, get exercised.
                    payload[0] = (byte)random.Next(0, 0x20);
                }
                else
                {
                    byte[] mutated = (byte[])clientHello.Clone();
                    int flips = random.Next(1, 6);
                    for (int f = 0; f < flips; f++) mutated[random.Next(mutated.Length)] = (byte)random.Next(256);
                    payload = DumperPacketBuilder.CryptoFrameBytes(0, mutated);
                }

                using InitialKeys keys = InitialKeys.Create(QuicVersion.V1, dcid);
                formatter.Format(new CapturedDatagram(null, null, null, DumperPacketBuilder.Long(PacketType.Initial, dcid, [], keys.Client, (ulong)i, payload)));
            }

            Assert.Equal(0, formatter.InternalErrorCount);
        }

        string text = output.ToString();
        foreach (string line in text.Split('\n'))
        {
            if (line.Contains("from=client pn=", StringComparison.Ordinal)) decoded++;
        }

        // Every packet opened: the fuzzing really reached the frame and TLS decoders.
        Assert.Equal(600, decoded);
        Assert.Contains("TLS ClientHello", text);
        Assert.DoesNotContain("internal error", text);
    }

    [Fact]
    public void MutatedCapturesAndKeyLogsNeverThrow()
    {
        var random = new Random(6);
        byte[] client = Rfc9001Vectors.Hex(SampleDatagrams.Rfc9001ClientInitial);
        byte[] pcap = MinimalPcap(client);
        int datagrams = 0;
        for (int i = 0; i < 500; i++)
        {
            byte[] mutated = (byte[])pcap.Clone();
            int flips = random.Next(1, 10);
            for (int f = 0; f < flips; f++)
            {
                // Hit the headers most of the time: that is where lengths and link types live.
                int position = random.Next(3) == 0 ? random.Next(mutated.Length) : random.Next(Math.Min(mutated.Length, 24 + 16 + 42));
                mutated[position] = (byte)random.Next(256);
            }

            if (random.Next(4) == 0) mutated = mutated.AsSpan(0, random.Next(mutated.Length)).ToArray();
            foreach (CapturedDatagram datagram in new PcapDatagramSource(mutated, null).Read())
            {
                datagrams++;
                Assert.NotNull(datagram.Data);
            }

            int randomLength = random.Next(60, 70);
            int secretLength = random.Next(0, 100);
            string keyLog = "CLIENT_TRAFFIC_SECRET_0 " + new string('a', randomLength) + " " + new string('b', secretLength) + "\n" +
                "SERVER_HANDSHAKE_TRAFFIC_SECRET\n\0\n" + Convert.ToHexString(mutated.AsSpan(0, Math.Min(40, mutated.Length)));
            // Only a 32-byte client random with a non-empty, even-length hex secret makes an entry.
            int expected = randomLength == 64 && secretLength > 0 && secretLength % 2 == 0 ? 1 : 0;
            Assert.Equal(expected, KeyLog.Parse(keyLog).ClientRandomCount);
        }

        Assert.True(datagrams > 0);
    }

    private static byte[] MinimalPcap(byte[] payload)
    {
        var file = new byte[24 + 16 + 42 + payload.Length];
        BitConverter.TryWriteBytes(file.AsSpan(0), 0xa1b2c3d4u);
        BitConverter.TryWriteBytes(file.AsSpan(20), 1u);
        BitConverter.TryWriteBytes(file.AsSpan(32), (uint)(42 + payload.Length));
        BitConverter.TryWriteBytes(file.AsSpan(36), (uint)(42 + payload.Length));
        Span<byte> frame = file.AsSpan(40);
        frame[12] = 0x08;
        frame[14] = 0x45;
        frame[16] = (byte)((28 + payload.Length) >> 8);
        frame[17] = (byte)(28 + payload.Length);
        frame[23] = 17;
        frame[34] = 0x01; frame[35] = 0xbb; frame[36] = 0x01; frame[37] = 0xbb;
        frame[38] = (byte)((8 + payload.Length) >> 8);
        frame[39] = (byte)(8 + payload.Length);
        payload.CopyTo(frame.Slice(42));
        return file;
    }
}
