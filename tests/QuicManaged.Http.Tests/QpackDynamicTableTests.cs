using QuicManaged.Http.Framing;
using QuicManaged.Http.Qpack;

namespace QuicManaged.Http.Tests;

/// <summary>
/// The decoding side of the QPACK dynamic table (RFC 9204): the Appendix B examples as data (encoder-stream bytes and
/// field sections in, headers, table state and the decoder-stream bytes we owe out), blocking, and hostile input.
/// </summary>
public sealed class QpackDynamicTableTests
{
    private static readonly TimeSpan Bounded = TimeSpan.FromSeconds(10);

    private static async Task<List<HeaderField>> DecodeAsync(QpackDecoderSession session, string hex, long streamId)
    {
        using var timeout = new CancellationTokenSource(Bounded);
        return await session.DecodeAsync(Convert.FromHexString(hex), streamId, 1 << 16, timeout.Token);
    }

    private static string TakeHex(QpackDecoderSession session) => Convert.ToHexString(session.TakeDecoderInstructions() ?? []).ToLowerInvariant();

    private static void AssertTable(QpackDecoderSession session, long size, params HeaderField[] entriesOldestFirst)
    {
        QpackDynamicTable table = session.Table;
        Assert.Equal(size, table.Size);
        Assert.Equal(entriesOldestFirst.Length, table.Count);
        for (int i = 0; i < entriesOldestFirst.Length; i++)
        {
            Assert.True(table.TryGet(table.DroppedCount + i, out HeaderField entry));
            Assert.Equal(entriesOldestFirst[i], entry);
        }
    }

    [Fact]
    public async Task Rfc9204AppendixB_AllExamples_HeadersTableStateAndDecoderStream()
    {
        var session = new QpackDecoderSession(maxTableCapacity: 220, maxBlockedStreams: 1);

        // B.1 Literal Field Line with Name Reference: no dynamic table, nothing on the decoder stream.
        Assert.Equal([new HeaderField(":path", "/index.html")], await DecodeAsync(session, "0000510b2f696e6465782e68746d6c", 0));
        Assert.Equal("", TakeHex(session));

        // B.2 Dynamic Table: capacity 220, two inserts with static name references, then post-base references (stream 4).
        session.OnEncoderStreamData(Convert.FromHexString("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468"));
        AssertTable(session, 106, new(":authority", "www.example.com"), new(":path", "/sample/path"));
        Assert.Equal([new HeaderField(":authority", "www.example.com"), new HeaderField(":path", "/sample/path")], await DecodeAsync(session, "03811011", 4));
        Assert.Equal("84", TakeHex(session)); // Section Acknowledgment, stream 4 (it also acknowledges both inserts)

        // B.3 Speculative Insert: literal name; the decoder acknowledges with Insert Count Increment 1.
        session.OnEncoderStreamData(Convert.FromHexString("4a637573746f6d2d6b65790c637573746f6d2d76616c7565"));
        AssertTable(session, 160, new(":authority", "www.example.com"), new(":path", "/sample/path"), new("custom-key", "custom-value"));
        Assert.Equal("01", TakeHex(session));

        // B.4 Duplicate Instruction, Stream Cancellation: stream 8's section needs 4 inserts and arrives before the
        // Duplicate; it blocks, the stream is abandoned, the decoder cancels it.
        using (var cancel = new CancellationTokenSource())
        {
            ValueTask<List<HeaderField>> blocked = session.DecodeAsync(Convert.FromHexString("050080c181"), 8, 1 << 16, cancel.Token);
            Assert.False(blocked.IsCompleted);
            Assert.Equal(1, session.BlockedStreams);
            cancel.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await blocked);
            Assert.Equal(0, session.BlockedStreams);
        }

        Assert.Equal("48", TakeHex(session)); // Stream Cancellation, stream 8
        session.OnEncoderStreamData([0x02]);
        AssertTable(session, 217, new(":authority", "www.example.com"), new(":path", "/sample/path"), new("custom-key", "custom-value"), new(":authority", "www.example.com"));
        Assert.Equal("01", TakeHex(session));
        // The same section now decodes (relative 0 = the duplicate, static :path /, relative 1 = custom-key).
        Assert.Equal(
            [new HeaderField(":authority", "www.example.com"), new HeaderField(":path", "/"), new HeaderField("custom-key", "custom-value")],
            await DecodeAsync(session, "050080c181", 12));
        Assert.Equal("8c", TakeHex(session));

        // B.5 Dynamic Table Insert, Eviction: a dynamic name reference; the oldest entry is evicted.
        session.OnEncoderStreamData(Convert.FromHexString("810d637573746f6d2d76616c756532"));
        AssertTable(session, 215, new(":path", "/sample/path"), new("custom-key", "custom-value"), new(":authority", "www.example.com"), new("custom-key", "custom-value2"));
        Assert.Equal(5, session.Table.InsertCount);
        Assert.Equal(1, session.Table.DroppedCount);
        Assert.Equal("01", TakeHex(session));
        Assert.Equal([new HeaderField("custom-key", "custom-value2")], await DecodeAsync(session, "060080", 16));
    }

    [Fact]
    public async Task BlockedStream_UnblocksWhenInsertArrives_SplitAnywhere()
    {
        var session = new QpackDecoderSession(220, 2);
        using var timeout = new CancellationTokenSource(Bounded);
        ValueTask<List<HeaderField>> blocked = session.DecodeAsync(Convert.FromHexString("03811011"), 4, 1 << 16, timeout.Token);
        Assert.False(blocked.IsCompleted);
        // Static-only sections on other streams still decode while one is blocked.
        Assert.Equal([new HeaderField(":path", "/index.html")], await DecodeAsync(session, "0000510b2f696e6465782e68746d6c", 0));
        byte[] encoder = Convert.FromHexString("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468");
        foreach (byte b in encoder)
        {
            session.OnEncoderStreamData([b]); // one byte at a time: partial instructions wait in the parser
        }

        Assert.Equal([new HeaderField(":authority", "www.example.com"), new HeaderField(":path", "/sample/path")], await blocked);
        Assert.Equal(0, session.BlockedStreams);
    }

    [Fact]
    public async Task BlockedStreams_BeyondAdvertisedLimit_DecompressionFailed()
    {
        var session = new QpackDecoderSession(220, 1);
        using var timeout = new CancellationTokenSource(Bounded);
        ValueTask<List<HeaderField>> first = session.DecodeAsync([0x02, 0x00, 0x80], 4, 1 << 16, timeout.Token);
        Assert.False(first.IsCompleted);
        var error = await Assert.ThrowsAsync<Http3ProtocolException>(async () => await session.DecodeAsync([0x02, 0x00, 0x80], 8, 1 << 16, timeout.Token));
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, error.ErrorCode);

        // A connection failure releases the blocked stream with an IOException.
        session.Fail(new InvalidOperationException("closed"));
        await Assert.ThrowsAsync<IOException>(async () => await first);
    }

    [Fact]
    public async Task ZeroBlockedStreamsAdvertised_AnyBlockingSection_DecompressionFailed()
    {
        var session = new QpackDecoderSession(220, 0);
        var error = await Assert.ThrowsAsync<Http3ProtocolException>(async () => await DecodeAsync(session, "03811011", 4));
        Assert.Equal(Http3ErrorCode.QpackDecompressionFailed, error.ErrorCode);
    }

    [Theory]
    // Required Insert Count wraps: MaxEntries 2 (capacity 64), 21 inserts, encoded (21 mod 4) + 1 = 2 is 21.
    [InlineData("020080", null)]
    [InlineData("050080", "Encoded Required Insert Count above 2 * MaxEntries")]
    [InlineData("020081", "reference to an evicted entry")]
    [InlineData("020010", "post-base index at the Required Insert Count")]
    [InlineData("0200", "Required Insert Count larger than the references need")]
    [InlineData("0281", "negative Base at the Required Insert Count, nothing referenced")]
    [InlineData("000080", "dynamic reference with Required Insert Count 0")]
    [InlineData("02ff7f", "negative Base below zero")]
    [InlineData("02811080", "post-base reference resolving to the entry and a relative index before Base 0")]
    [InlineData("0000ff7f", "static index 190 out of range")]
    [InlineData("02008080", null)] // the same entry twice
    public async Task FieldSection_Prefix_And_References(string hex, string? why)
    {
        var session = new QpackDecoderSession(64, 1);
        session.OnEncoderStreamData(Convert.FromHexString("3f2141780179")); // capacity 64, insert x: y (34 bytes)
        for (int i = 0; i < 20; i++)
        {
            session.OnEncoderStreamData([0x00]); // Duplicate: one entry fits, each evicts the previous
        }

        Assert.Equal(21, session.Table.InsertCount);
        Assert.Equal(1, session.Table.Count);
        if (why is null)
        {
            List<HeaderField> fields = await DecodeAsync(session, hex, 4);
            Assert.NotEmpty(fields);
            Assert.All(fields, f => Assert.Equal(new HeaderField("x", "y"), f));
        }
        else
        {
            var error = await Assert.ThrowsAsync<Http3ProtocolException>(async () => await DecodeAsync(session, hex, 4));
            Assert.True(error.ErrorCode == Http3ErrorCode.QpackDecompressionFailed, why + ": " + error.Message);
        }
    }

    [Theory]
    [InlineData("3f22", "capacity above the advertised maximum")]
    [InlineData("3f2141787f00", "literal name: value length beyond the capacity")]
    [InlineData("3f2100", "Duplicate of an entry that does not exist")]
    [InlineData("3f215f02", "literal name longer than the capacity")]
    [InlineData("3f21c07f00", "static name reference: value too long")]
    [InlineData("3f21ff2400", "static index 99 out of range")]
    [InlineData("3f218001", "dynamic name reference to nothing")]
    [InlineData("c000", "insert before any capacity was set")]
    [InlineData("3f21c1ff807f", "Huffman value too long")]
    [InlineData("3f21c181ff", "invalid Huffman (EOS)")]
    [InlineData("3fffffffffffffffffffff7f", "integer overflow")]
    public void EncoderStream_Violations_EncoderStreamError(string hex, string why)
    {
        var session = new QpackDecoderSession(64, 1);
        var error = Assert.Throws<Http3ProtocolException>(() => session.OnEncoderStreamData(Convert.FromHexString(hex)));
        Assert.True(error.ErrorCode == Http3ErrorCode.QpackEncoderStreamError, why + ": " + error.Message);
    }

    [Fact]
    public void EncoderStream_Huffman_InsertsAndEvictsBySize()
    {
        var session = new QpackDecoderSession(128, 1);
        // Capacity 128; literal name "x" with the RFC 7541 Huffman value "www.example.com" (48 bytes).
        session.OnEncoderStreamData(Convert.FromHexString("3f6141788cf1e3c2e5f23a6ba0ab90f4ff"));
        AssertTable(session, 48, new HeaderField("x", "www.example.com"));
        // Insert with static name reference :path and a 60-byte value (97 bytes): evicts the first entry.
        byte[] insert = [0xc1, 60, .. Enumerable.Repeat((byte)'a', 60)];
        session.OnEncoderStreamData(insert);
        AssertTable(session, 97, new HeaderField(":path", new string('a', 60)));
        // Lowering the capacity evicts.
        session.OnEncoderStreamData([0x3f, 0x01]); // capacity 32
        AssertTable(session, 0);
        Assert.Equal(2, session.Table.InsertCount);
    }

    /// <summary>Random mutations of valid encoder streams: only QPACK_ENCODER_STREAM_ERROR, and memory stays bounded.</summary>
    [Fact]
    public void EncoderStream_MutatedInput_OnlyEncoderStreamErrorAndBoundedMemory()
    {
        var random = new Random(9204);
        byte[][] seeds =
        [
            Convert.FromHexString("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f706174684a637573746f6d2d6b65790c637573746f6d2d76616c756502810d637573746f6d2d76616c756532"),
            Convert.FromHexString("3f6141788cf1e3c2e5f23a6ba0ab90f4ff0000"),
        ];
        int accepted = 0;
        int rejected = 0;
        for (int i = 0; i < 20000; i++)
        {
            byte[] input = Mutate(random, seeds[i % seeds.Length]);
            var session = new QpackDecoderSession(220, 4);
            try
            {
                // Fed in random pieces, as a stream delivers them.
                int offset = 0;
                while (offset < input.Length)
                {
                    int n = Math.Min(input.Length - offset, 1 + random.Next(8));
                    session.OnEncoderStreamData(input.AsSpan(offset, n));
                    offset += n;
                }

                accepted++;
            }
            catch (Http3ProtocolException ex)
            {
                Assert.Equal(Http3ErrorCode.QpackEncoderStreamError, ex.ErrorCode);
                rejected++;
            }

            Assert.True(session.Table.Size <= 220);
            Assert.True(session.Table.Count <= 220 / 32);
        }

        Assert.True(accepted > 100 && rejected > 100, $"accepted {accepted}, rejected {rejected}");
    }

    /// <summary>A declared string length far beyond the capacity is refused at once, not buffered while waiting for it.</summary>
    [Fact]
    public void EncoderStream_HugeDeclaredLength_RefusedBeforeBuffering()
    {
        var session = new QpackDecoderSession(4096, 4);
        session.OnEncoderStreamData([0x3f, 0xe1, 0x1f]); // capacity 4096
        // Insert with Literal Name, name length 1 << 40 (5-bit prefix, then continuation bytes).
        byte[] huge = [0x5f, 0xe1, 0xff, 0xff, 0xff, 0xff, 0x1f];
        var error = Assert.Throws<Http3ProtocolException>(() => session.OnEncoderStreamData(huge));
        Assert.Equal(Http3ErrorCode.QpackEncoderStreamError, error.ErrorCode);

        // A legitimate large instruction arriving in pieces is held only up to its own size.
        var session2 = new QpackDecoderSession(4096, 4);
        session2.OnEncoderStreamData([0x3f, 0xe1, 0x1f]);
        // Insert With Literal Name "n", value length 127 + 3841 = 3968 (7-bit prefix, continuation bytes 0x81 0x1e).
        byte[] big = [0x41, (byte)'n', 0x7f, 0x81, 0x1e, .. Enumerable.Repeat((byte)'v', 3968)];
        for (int offset = 0; offset < big.Length; offset += 100)
        {
            session2.OnEncoderStreamData(big.AsSpan(offset, Math.Min(100, big.Length - offset)));
        }

        Assert.Equal(1, session2.Table.InsertCount);
        Assert.Equal(1 + 3968 + 32, session2.Table.Size);
        Assert.True(session2.Table.Size <= 4096);
    }

    /// <summary>Random mutations of field sections decoded against a populated table: only typed errors, never a hang.</summary>
    [Fact]
    public async Task FieldSection_MutatedInput_OnlyTypedErrors()
    {
        var random = new Random(9114);
        byte[][] seeds =
        [
            Convert.FromHexString("050080c181"),
            Convert.FromHexString("03811011"),
            Convert.FromHexString("0000510b2f696e6465782e68746d6c"),
            Convert.FromHexString("0500400474657374"),
        ];
        var session = new QpackDecoderSession(220, 0); // 0 blocked streams: anything needing more inserts fails at once
        session.OnEncoderStreamData(Convert.FromHexString("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f706174684a637573746f6d2d6b65790c637573746f6d2d76616c756502"));
        int decoded = 0;
        int rejected = 0;
        for (int i = 0; i < 20000; i++)
        {
            byte[] input = Mutate(random, seeds[i % seeds.Length]);
            try
            {
                ValueTask<List<HeaderField>> result = session.DecodeAsync(input, 4 * i, 4096, CancellationToken.None);
                Assert.True(result.IsCompleted);
                await result;
                decoded++;
            }
            catch (Http3ProtocolException ex)
            {
                Assert.True(ex.ErrorCode is Http3ErrorCode.QpackDecompressionFailed or Http3ErrorCode.ExcessiveLoad, ex.ErrorCode.ToString());
                rejected++;
            }
        }

        Assert.True(decoded > 100 && rejected > 100, $"decoded {decoded}, rejected {rejected}");
        Assert.Equal(0, session.BlockedStreams);
    }

    private static byte[] Mutate(Random random, byte[] seed)
    {
        var bytes = new List<byte>(seed);
        int mutations = 1 + random.Next(3);
        for (int m = 0; m < mutations; m++)
        {
            int position = bytes.Count == 0 ? 0 : random.Next(bytes.Count);
            switch (random.Next(5))
            {
                case 0 when bytes.Count > 0:
                    bytes[position] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when bytes.Count > 0:
                    bytes[position] = (byte)random.Next(256);
                    break;
                case 2:
                    bytes.Insert(position, (byte)random.Next(256));
                    break;
                case 3 when bytes.Count > 0:
                    bytes.RemoveAt(position);
                    break;
                default:
                    bytes.RemoveRange(position, bytes.Count - position); // truncate
                    break;
            }
        }

        return bytes.ToArray();
    }
}
