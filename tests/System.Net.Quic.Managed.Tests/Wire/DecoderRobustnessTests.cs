using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Wire;

/// <summary>Seeded, bounded random and mutated input for every decoder: only a typed result may come out (an exception
/// of any kind fails the test), and whatever decodes must re-encode to something that decodes the same way.</summary>
public class DecoderRobustnessTests
{
    private const int Iterations = 20000;

    private static readonly string[] HeaderSeeds =
    [
        "c300000001088394c8f03e5157080000449e00000002", // RFC 9001 A.2 header (padded below to 1200)
        "c1000000010008f067a5502a4262b50040750001",
        "d36b3343cf088394c8f03e5157080000449e00000002",
        "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba",
        "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6",
        "ff00000000030102030204056b3343cf000000011a2a3a4a",
        "e10a0a0a0a0401020304000102",
    ];

    private static byte[][] HeaderSeedBytes()
    {
        var seeds = new List<byte[]>();
        foreach (string hex in HeaderSeeds)
        {
            byte[] bytes = Convert.FromHexString(hex);
            seeds.Add(bytes);
            if (bytes[0] is 0xc3 or 0xd3 or 0xc1)
            {
                byte[] padded = new byte[bytes[0] == 0xc1 ? 135 : 1200];
                bytes.CopyTo(padded, 0);
                seeds.Add(padded);
            }
        }

        // A coalesced Initial + Handshake + 1-RTT datagram.
        byte[] buffer = new byte[400];
        var writer = new QuicWriter(buffer);
        foreach (PacketType type in new[] { PacketType.Initial, PacketType.Handshake, PacketType.ZeroRtt })
        {
            Assert.True(LongHeader.TryWrite(ref writer, type, QuicVersion.V2, [1, 2, 3, 4], [5], type == PacketType.Initial ? [7, 7] : default, 2, out int lengthOffset));
            Assert.True(writer.TryFill(0x11, 30));
            Assert.True(LongHeader.TryPatchLength(buffer, lengthOffset, writer.Position - lengthOffset - 2));
        }

        Assert.True(ShortHeader.TryWrite(ref writer, [1, 2, 3, 4], true, false, 1));
        Assert.True(writer.TryFill(0x22, 30));
        seeds.Add(writer.Written.ToArray());
        return seeds.ToArray();
    }

    [Fact]
    public void VariableLengthIntegers()
    {
        var mutator = new InputMutator(1);
        byte[] seed = Convert.FromHexString("c2197c5eff14e88c");
        Span<byte> rewritten = stackalloc byte[8];
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seed);
            if (VariableLengthInteger.TryRead(input, out ulong value, out int length))
            {
                Assert.True(value <= VariableLengthInteger.MaxValue);
                Assert.Equal(VariableLengthInteger.GetLengthFromFirstByte(input[0]), length);
                Assert.True(VariableLengthInteger.TryWrite(rewritten, value, length));
                Assert.Equal(input.AsSpan(0, length).ToArray(), rewritten.Slice(0, length).ToArray());
            }
            else
            {
                Assert.True(input.Length == 0 || input.Length < VariableLengthInteger.GetLengthFromFirstByte(input[0]));
            }
        }
    }

    [Fact]
    public void LongHeaders()
    {
        var mutator = new InputMutator(2);
        byte[][] seeds = HeaderSeedBytes();
        byte[] rebuilt = new byte[2048];
        int parsed = 0;
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % seeds.Length]);
            bool greased = (i & 1) == 0;
            if (!LongHeader.TryParse(input, out LongHeader header, greased))
            {
                continue;
            }

            parsed++;
            Assert.True(header.TotalLength <= input.Length);
            Assert.True(PacketFirstByte.IsLongHeader(header.FirstByte));
            if (header.Type is PacketType.Initial or PacketType.Handshake or PacketType.ZeroRtt)
            {
                Assert.True(header.DestinationConnectionId.Length <= ConnectionIdLimits.MaxLength);
                Assert.Equal(header.PacketNumberOffset + header.PayloadLength, header.TotalLength);

                // Rebuild the header from the parsed fields with the same Length field size; it must parse identically.
                int lengthFieldSize = VariableLengthInteger.GetLengthFromFirstByte(input[header.PacketNumberOffset - LengthFieldBack(header)]);
                var writer = new QuicWriter(rebuilt);
                if (!LongHeader.TryWrite(ref writer, header.Type, header.Version, header.DestinationConnectionId, header.SourceConnectionId,
                        header.Token, 1, out int lengthOffset, lengthFieldSize))
                {
                    Assert.Fail("a parsed header must be writable");
                }

                Assert.True(writer.TryWriteBytes(input.AsSpan(header.PacketNumberOffset, header.PayloadLength)));
                Assert.True(LongHeader.TryPatchLength(rebuilt, lengthOffset, header.PayloadLength, lengthFieldSize));
                Assert.True(LongHeader.TryParse(writer.Written, out LongHeader again));
                Assert.Equal(header.Type, again.Type);
                Assert.Equal(header.Version, again.Version);
                Assert.Equal(header.DestinationConnectionId.ToArray(), again.DestinationConnectionId.ToArray());
                Assert.Equal(header.SourceConnectionId.ToArray(), again.SourceConnectionId.ToArray());
                Assert.Equal(header.Token.ToArray(), again.Token.ToArray());
                Assert.Equal(header.PayloadLength, again.PayloadLength);
            }
            else if (header.Type == PacketType.Retry)
            {
                Assert.Equal(LongHeader.RetryIntegrityTagLength, header.RetryIntegrityTag.Length);
                Assert.Equal(input.Length, header.TotalLength);
            }
            else
            {
                Assert.False(QuicVersion.IsSupported(header.Version));
            }
        }

        Assert.True(parsed > Iterations / 10, $"only {parsed} inputs parsed: the mutations are too destructive to test re-encoding");
    }

    // The size of the Length field's encoding, found by re-reading it: the byte at PacketNumberOffset - size starts it.
    private static int LengthFieldBack(LongHeader header)
    {
        for (int size = 1; size <= 8; size *= 2)
        {
            int start = header.PacketNumberOffset - size;
            if (start > 0 && VariableLengthInteger.GetLengthFromFirstByte(header.Packet[start]) == size &&
                VariableLengthInteger.TryRead(header.Packet.Slice(start), out ulong value, out _) && value == (ulong)header.PayloadLength)
            {
                return size;
            }
        }

        throw new InvalidOperationException("Length field not found");
    }

    [Fact]
    public void ShortHeaders()
    {
        var mutator = new InputMutator(3);
        byte[] seed = Convert.FromHexString("4101020304050607080910111213141516171819202122232425");
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seed);
            int cidLength = mutator.Random.Next(-1, 22);
            if (ShortHeader.TryParse(input, cidLength, out ShortHeader header, (i & 1) == 0))
            {
                Assert.Equal(cidLength, header.DestinationConnectionId.Length);
                Assert.Equal(1 + cidLength, header.PacketNumberOffset);
                Assert.Equal(input.Length, header.Packet.Length);
                Assert.False(PacketFirstByte.IsLongHeader(header.FirstByte));
            }
        }
    }

    [Fact]
    public void VersionNegotiationPackets()
    {
        var mutator = new InputMutator(4);
        byte[] seed = Convert.FromHexString("ff00000000030102030204056b3343cf000000011a2a3a4a");
        byte[] rebuilt = new byte[4096];
        var versions = new List<uint>();
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seed);
            if (!VersionNegotiationPacket.TryParse(input, out VersionNegotiationPacket vn))
            {
                continue;
            }

            versions.Clear();
            foreach (uint version in vn.Versions)
            {
                versions.Add(version);
            }

            Assert.Equal(vn.VersionCount, versions.Count);
            var writer = new QuicWriter(rebuilt);
            Assert.True(VersionNegotiationPacket.TryWrite(ref writer, vn.DestinationConnectionId, vn.SourceConnectionId, versions.ToArray(), input[0]));
            Assert.Equal(input.AsSpan(1).ToArray(), writer.Written.Slice(1).ToArray());
        }
    }

    [Fact]
    public void RetryPackets()
    {
        var mutator = new InputMutator(5);
        byte[][] seeds =
        [
            Convert.FromHexString(HeaderSeeds[3]),
            Convert.FromHexString(HeaderSeeds[4]),
        ];
        byte[] rebuilt = new byte[4096];
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seeds[i & 1]);
            if (!RetryPacket.TryParse(input, out RetryPacket retry))
            {
                continue;
            }

            var writer = new QuicWriter(rebuilt);
            Assert.True(RetryPacket.TryWriteWithoutTag(ref writer, retry.Version, retry.DestinationConnectionId, retry.SourceConnectionId, retry.Token, retry.FirstByte));
            Assert.True(writer.TryWriteBytes(retry.IntegrityTag));
            Assert.Equal(input, writer.Written.ToArray());

            byte[] pseudo = new byte[RetryPacket.GetPseudoPacketLength(8, retry.PacketWithoutTag.Length)];
            Assert.True(RetryPacket.TryWritePseudoPacket(pseudo, new byte[8], retry.PacketWithoutTag, out int written));
            Assert.Equal(pseudo.Length, written);
        }
    }

    [Fact]
    public void CoalescedDatagrams()
    {
        var mutator = new InputMutator(6);
        byte[][] seeds = HeaderSeedBytes();
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % seeds.Length]);
            var packets = new CoalescedPacketEnumerator(input, (i & 1) == 0);
            int covered = 0;
            int count = 0;
            while (packets.MoveNext())
            {
                Assert.Equal(covered, packets.CurrentOffset);
                Assert.True(packets.Current.Length > 0);
                covered += packets.Current.Length;
                Assert.True(++count <= input.Length, "the splitter must always advance");
            }

            Assert.True(covered == input.Length || packets.StoppedOnMalformedPacket);
            Assert.True(covered <= input.Length);
        }
    }

    [Fact]
    public void StatelessResetCandidates()
    {
        var mutator = new InputMutator(7);
        byte[] seed = new byte[40];
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seed);
            bool found = StatelessReset.TryGetTokenCandidate(input, out ReadOnlySpan<byte> token);
            Assert.Equal(input.Length >= StatelessReset.MinimumLength, found);
            if (found)
            {
                Assert.True(StatelessReset.TokenEquals(token, input.AsSpan(input.Length - 16)));
            }
        }
    }

    [Fact]
    public void Frames()
    {
        var mutator = new InputMutator(8);
        var seeds = new List<byte[]>();
        foreach (string hex in FrameTests.EveryFrame())
        {
            seeds.Add(Convert.FromHexString(hex));
        }

        // Multi-frame payloads: every length-delimited frame back to back, then the RFC 9001 A.3 payload.
        var all = new List<byte>();
        foreach (byte[] seed in seeds)
        {
            if (seed[0] is not (0x08 or 0x0c or 0x30))
            {
                all.AddRange(seed);
            }
        }

        seeds.Add(all.ToArray());
        seeds.Add(Convert.FromHexString(
            "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf73988cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c940d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00020304"));

        var first = new List<string>();
        var second = new List<string>();
        byte[] reencoded = new byte[4096];
        byte[] again = new byte[4096];
        int decodedFrames = 0;
        for (int i = 0; i < Iterations * 2; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % seeds.Count]);
            first.Clear();
            second.Clear();
            TransportErrorCode error = FrameTestCodec.DecodeAll(input, reencoded, out int length, first);
            Assert.True(error is TransportErrorCode.NoError or TransportErrorCode.FrameEncodingError or TransportErrorCode.ProtocolViolation, error.ToString());
            decodedFrames += first.Count;

            // Everything that decoded re-encodes (never longer) and decodes to the same frames.
            Assert.Equal(TransportErrorCode.NoError, FrameTestCodec.DecodeAll(reencoded.AsSpan(0, length), again, out int length2, second));
            Assert.Equal(first, second);
            Assert.Equal(reencoded.AsSpan(0, length).ToArray(), again.AsSpan(0, length2).ToArray());
        }

        Assert.True(decodedFrames > Iterations, $"only {decodedFrames} frames decoded");
    }

    [Fact]
    public void AckFrames()
    {
        var mutator = new InputMutator(9);
        var random = mutator.Random;
        byte[] buffer = new byte[1024];
        byte[] reencoded = new byte[2048];
        byte[] again = new byte[2048];
        var first = new List<string>();
        var second = new List<string>();
        var ranges = new List<AckRange>();
        for (int i = 0; i < Iterations; i++)
        {
            ranges.Clear();
            ulong next = (ulong)random.Next(0, 5000);
            do
            {
                ulong length = Math.Min((ulong)random.Next(0, 20), next);
                ranges.Add(new AckRange((long)(next - length), (long)next));
                ulong gap = (ulong)random.Next(2, 30);
                if (next - length < gap)
                {
                    break;
                }

                next = next - length - gap;
            }
            while (random.Next(8) != 0);

            var writer = new QuicWriter(buffer);
            Assert.True(AckFrame.TryWrite(ref writer, ranges.ToArray(), (ulong)random.Next(100), random.Next(2) == 0 ? null : new EcnCounts(1, 2, 3)));
            byte[] input = mutator.Mutate(writer.Written.ToArray());

            first.Clear();
            second.Clear();
            TransportErrorCode error = FrameTestCodec.DecodeAll(input, reencoded, out int length1, first);
            Assert.True(error is TransportErrorCode.NoError or TransportErrorCode.FrameEncodingError or TransportErrorCode.ProtocolViolation);
            Assert.Equal(TransportErrorCode.NoError, FrameTestCodec.DecodeAll(reencoded.AsSpan(0, length1), again, out int length2, second));
            Assert.Equal(first, second);
        }
    }

    [Fact]
    public void TransportParameterBlocks()
    {
        var mutator = new InputMutator(10);
        byte[][] seeds =
        [
            Convert.FromHexString("0408ffffffffffffffff05048000ffff07048000ffff0801100104800075300901100f088394c8f03e51570806048000ffff"),
            TransportParametersTests.EveryParameter().Encode()!,
        ];
        int decoded = 0;
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = mutator.Mutate(seeds[i & 1]);
            bool fromServer = (i & 2) == 0;
            TransportErrorCode error = TransportParameters.TryDecode(input, fromServer, out TransportParameters? parameters, out string? reason);
            if (error != TransportErrorCode.NoError)
            {
                Assert.Equal(TransportErrorCode.TransportParameterError, error);
                Assert.NotNull(reason);
                Assert.Null(parameters);
                continue;
            }

            decoded++;
            Assert.NotNull(parameters);
            byte[]? encoded = parameters.Encode();
            Assert.NotNull(encoded);
            Assert.Equal(TransportErrorCode.NoError, TransportParameters.TryDecode(encoded, fromServer, out TransportParameters? again, out _));
            Assert.Equal(encoded, again!.Encode());
        }

        Assert.True(decoded > Iterations / 20, $"only {decoded} blocks decoded");
    }
}
