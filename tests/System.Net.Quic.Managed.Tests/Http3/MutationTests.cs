using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;
using QuicManaged.Interop.Http3;
using QuicManaged.Interop.Transport;

namespace System.Net.Quic.Managed.Tests.Http3;

/// <summary>Seeded mutation of valid inputs: decoders must answer with typed errors only, never other exceptions.</summary>
public class MutationTests
{
    private const int Iterations = 4000;

    private static byte[] Mutate(Random random, byte[] input)
    {
        List<byte> bytes = input.ToList();
        int edits = random.Next(1, 4);
        for (int e = 0; e < edits; e++)
        {
            switch (random.Next(5))
            {
                case 0 when bytes.Count > 0:
                    bytes[random.Next(bytes.Count)] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when bytes.Count > 0:
                    bytes[random.Next(bytes.Count)] = (byte)random.Next(256);
                    break;
                case 2 when bytes.Count > 0:
                    bytes.RemoveRange(random.Next(bytes.Count), 1);
                    break;
                case 3:
                    bytes.Insert(random.Next(bytes.Count + 1), (byte)random.Next(256));
                    break;
                default:
                    if (bytes.Count > 0)
                    {
                        // Truncate at a random point.
                        int keep = random.Next(bytes.Count);
                        bytes.RemoveRange(keep, bytes.Count - keep);
                    }

                    break;
            }
        }

        return bytes.ToArray();
    }

    [Fact]
    public void QpackDecoder_MutatedSections_OnlyTypedErrors()
    {
        Random random = new(9204);
        byte[][] seeds =
        [
            QpackEncoder.Encode([new(":method", "GET"), new(":scheme", "https"), new(":authority", "example.org"), new(":path", "/a/b?c=d")]),
            QpackEncoder.Encode([new(":status", "200"), new("content-length", "1048576"), new("x-custom", "value \u00e9"), new("server", "")]),
            Convert.FromHexString("0000508cf1e3c2e5f23a6ba0ab90f4ff"),
        ];
        int decoded = 0;
        int rejected = 0;
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = Mutate(random, seeds[i % seeds.Length]);
            List<HeaderField> fields = new();
            Http3ErrorCode error = QpackDecoder.Decode(input, 4096, fields, out _);
            if (error == Http3ErrorCode.NoError)
            {
                decoded++;
            }
            else
            {
                Assert.True(error is Http3ErrorCode.QpackDecompressionFailed or Http3ErrorCode.ExcessiveLoad, error.ToString());
                rejected++;
            }
        }

        // Both outcomes occur: the mutations reach past the prefix checks.
        Assert.True(decoded > 100 && rejected > 100, $"decoded {decoded}, rejected {rejected}");
    }

    [Fact]
    public void Huffman_RandomInput_NeverThrows()
    {
        Random random = new(7541);
        byte[] destination = new byte[64];
        int accepted = 0;
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = new byte[random.Next(0, 32)];
            random.NextBytes(input);
            if (HuffmanCode.TryDecode(input, destination, out _))
            {
                accepted++;
            }
        }

        Assert.InRange(accepted, 1, Iterations - 1);
    }

    [Fact]
    public async Task FrameReader_MutatedResponses_OnlyTypedErrors()
    {
        Random random = new(9114);
        byte[] seed = new[]
        {
            Http3Message.EncodeHeadersFrame([new(":status", "200"), new("content-length", "20")]),
            Http3FrameCodec.EncodeFrame(Http3FrameType.Data, new byte[12]),
            Http3FrameCodec.EncodeFrame(0x21, [1, 2]),
            Http3FrameCodec.EncodeFrame(Http3FrameType.Data, new byte[8]),
        }.SelectMany(f => f).ToArray();
        int ok = 0;
        int rejected = 0;
        for (int i = 0; i < Iterations; i++)
        {
            byte[] input = Mutate(random, seed);
            try
            {
                await Http3Client.ReadResponseAsync(new Http3FrameReader(new MemoryStream(input), 32), Stream.Null, CancellationToken.None);
                ok++;
            }
            catch (Http3ProtocolException)
            {
                rejected++;
            }
        }

        Assert.True(ok > 10 && rejected > 100, $"ok {ok}, rejected {rejected}");
    }

    [Fact]
    public async Task FrameReader_MutatedRequests_OnlyTypedErrors()
    {
        Random random = new(9115);
        byte[] seed = Http3Message.EncodeHeadersFrame([new(":method", "GET"), new(":scheme", "https"), new(":authority", "a.example"), new(":path", "/file")]);
        int rejected = 0;
        for (int i = 0; i < Iterations; i++)
        {
            try
            {
                await Http3Server.ReadRequestHeadersAsync(new Http3FrameReader(new MemoryStream(Mutate(random, seed)), 32), CancellationToken.None);
            }
            catch (Http3ProtocolException)
            {
                rejected++;
            }
        }

        Assert.InRange(rejected, 100, Iterations - 10);
    }

    [Fact]
    public void Settings_RandomPayloads_OnlyTypedErrors()
    {
        Random random = new(72);
        for (int i = 0; i < Iterations; i++)
        {
            byte[] payload = new byte[random.Next(0, 40)];
            random.NextBytes(payload);
            Http3ErrorCode error = Http3Settings.TryParse(payload, out _);
            Assert.True(error is Http3ErrorCode.NoError or Http3ErrorCode.FrameError or Http3ErrorCode.SettingsError, error.ToString());
        }
    }

    [Fact]
    public async Task ControlStream_MutatedStreams_OnlyTypedConnectionErrors()
    {
        Random random = new(6201);
        byte[] seed = new[]
        {
            new byte[] { 0x00 },
            new Http3Settings { MaxFieldSectionSize = 4096 }.EncodeFrame(),
            Http3FrameCodec.EncodeFrame(0x21, [1, 2, 3]),
            Http3FrameCodec.EncodeSingleIntegerFrame(Http3FrameType.Goaway, 4),
            Http3FrameCodec.EncodeSingleIntegerFrame(Http3FrameType.CancelPush, 1),
        }.SelectMany(f => f).ToArray();
        int failures = 0;
        for (int i = 0; i < 1000; i++)
        {
            using CancellationTokenSource cts = new(TimeSpan.FromSeconds(10));
            (InMemoryConnection client, InMemoryConnection peer) = InMemoryConnection.CreatePair();
            Http3Session session = new(client, isServer: i % 2 == 0, new Http3Settings());
            Task loop = session.RunAcceptLoopAsync(static _ => Task.CompletedTask, cts.Token);
            IMultiplexedStream stream = await peer.OpenStreamAsync(false, cts.Token);
            await stream.Stream.WriteAsync(Mutate(random, seed), cts.Token);
            await peer.CloseAsync(0, cts.Token);
            // The loop must end without an exception escaping; a violation is recorded as a typed H3/QPACK error.
            await loop.WaitAsync(cts.Token);
            if (session.Failure is Http3ProtocolException failure)
            {
                Assert.InRange((long)failure.ErrorCode, 0x100, 0x202);
                failures++;
            }
        }

        Assert.InRange(failures, 50, 999);
    }
}
