using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Ids;

/// <summary>
/// QUIC-LB connection IDs (draft-ietf-quic-load-balancers-21): the draft's test vectors (Ids/QuicLbTestVectors.txt) and
/// a load balancer's decoder written apart from the generator (<see cref="QuicLbDecoder"/>) that must route every ID a
/// server issues back to that server.
/// </summary>
public class QuicLbConnectionIdTests
{
    public static TheoryData<int, string, string, string, string> DraftVectors()
    {
        var data = new TheoryData<int, string, string, string, string>();
        string path = Path.Combine(AppContext.BaseDirectory, "Ids", "QuicLbTestVectors.txt");
        foreach (string line in File.ReadAllLines(path))
        {
            if (line.Length == 0 || line.StartsWith('#')) continue;
            string[] f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            data.Add(int.Parse(f[0], Globalization.CultureInfo.InvariantCulture), f[1], f[2], f[3], f[4]);
        }
        return data;
    }

    [Fact]
    public void TheVectorFileHoldsEveryModeOfTheDraft()
    {
        var rows = DraftVectors().Select(r => ((string)r[1], (string)r[2], (string)r[3])).ToList();
        Assert.Equal(6, rows.Count);
        Assert.Contains(rows, r => r.Item3 == "-");                                             // plaintext
        Assert.Contains(rows, r => r.Item3 != "-" && (r.Item1.Length + r.Item2.Length) / 2 == 16); // single pass
        Assert.Contains(rows, r => r.Item3 != "-" && (r.Item1.Length + r.Item2.Length) / 2 % 2 == 1); // four-pass, odd
        Assert.Contains(rows, r => r.Item3 != "-" && r.Item1.Length > r.Item2.Length);            // fourth decryption pass
    }

    [Theory]
    [MemberData(nameof(DraftVectors))]
    public void GeneratorReproducesTheDraftVector(int configRotation, string serverId, string nonce, string key, string expected)
    {
        byte[] sid = Convert.FromHexString(serverId);
        byte[] n = Convert.FromHexString(nonce);
        byte[] k = key == "-" ? [] : Convert.FromHexString(key);
        using var generator = new QuicLbConnectionIdGenerator(configRotation, sid, n.Length, k, encodeLength: true);
        byte[] cid = new byte[generator.Length];
        generator.Encode(n, 0, cid);
        Assert.Equal(expected, Convert.ToHexStringLower(cid));
    }

    [Theory]
    [MemberData(nameof(DraftVectors))]
    public void DecoderExtractsTheServerIdOfTheDraftVector(int configRotation, string serverId, string nonce, string key, string cid)
    {
        using var decoder = new QuicLbDecoder(configRotation, serverId.Length / 2, nonce.Length / 2, key == "-" ? null : Convert.FromHexString(key));
        Assert.Equal(serverId, Convert.ToHexStringLower(decoder.DecodeServerId(Convert.FromHexString(cid))!));
    }

    /// <summary>Server ID length, nonce length, keyed: plaintext, single pass, four-pass even and odd, server ID longer than nonce.</summary>
    public static TheoryData<int, int, bool, bool> Configurations() => new()
    {
        { 2, 4, false, false },
        { 2, 4, false, true },
        { 4, 12, true, false },
        { 3, 4, true, false },
        { 3, 5, true, true },
        { 10, 5, true, false },
        { 9, 9, true, false },
        { 9, 9, true, true },
        { 1, 4, true, true },
    };

    [Theory]
    [MemberData(nameof(Configurations))]
    public void EveryIssuedIdRoutesBackToItsServer(int serverIdLength, int nonceLength, bool keyed, bool workerTag)
    {
        var random = new SeededRandomSource(serverIdLength * 100 + nonceLength);
        byte[] key = keyed ? Enumerable.Range(0x40, 16).Select(i => (byte)i).ToArray() : [];
        const int configRotation = 5;
        using var decoder = new QuicLbDecoder(configRotation, serverIdLength, nonceLength, key);
        var seen = new HashSet<string>();
        for (int server = 0; server < 3; server++)
        {
            byte[] sid = Enumerable.Range(0, serverIdLength).Select(i => (byte)(server * 37 + i * 11 + 1)).ToArray();
            using var lb = new QuicLbConnectionIdGenerator(configRotation, sid, nonceLength, key, encodeLength: false, trailingLength: workerTag ? 1 : 0);
            ConnectionIdGenerator generator = workerTag ? new WorkerTaggedConnectionIdGenerator(lb, worker: server % 2, workerCount: 2) : lb;
            Assert.Equal(1 + serverIdLength + nonceLength + (workerTag ? 1 : 0), generator.Length);
            for (int i = 0; i < 200; i++)
            {
                ConnectionId id = generator.Create(random);
                Assert.Equal(generator.Length, id.Length);
                Assert.Equal(configRotation, id.Span[0] >> 5);
                Assert.Equal(sid, decoder.DecodeServerId(id.Span));
                if (workerTag) Assert.Equal(server % 2, WorkerTaggedConnectionIdGenerator.WorkerOf(id.Span, 2));
                Assert.True(seen.Add(id.ToString()), $"duplicate ID {id}");
            }
        }
    }

    [Fact]
    public void LengthSelfDescriptionAndRandomBits()
    {
        var random = new SeededRandomSource(7);
        using var described = new QuicLbConnectionIdGenerator(3, [1, 2], 6, [], encodeLength: true);
        using var random5 = new QuicLbConnectionIdGenerator(3, [1, 2], 6, [], encodeLength: false);
        var lowBits = new HashSet<int>();
        for (int i = 0; i < 64; i++)
        {
            Assert.Equal((3 << 5) | 8, described.Create(random).Span[0]);
            ConnectionId id = random5.Create(random);
            Assert.Equal(3, id.Span[0] >> 5);
            lowBits.Add(id.Span[0] & 0x1F);
        }
        Assert.True(lowBits.Count > 8, "the five bits not used for the length are random");
    }

    [Theory]
    [InlineData(7, 2, 6, 0, 0)]   // codepoint 0b111 is reserved for unroutable IDs
    [InlineData(-1, 2, 6, 0, 0)]
    [InlineData(0, 0, 6, 0, 0)]   // server ID at least one octet
    [InlineData(0, 2, 3, 0, 0)]   // nonce at least four octets
    [InlineData(0, 10, 10, 0, 0)] // server ID and nonce at most 19 octets
    [InlineData(0, 2, 6, 15, 0)]  // AES-128 key or none
    [InlineData(0, 9, 10, 0, 1)]  // no room left for the worker tag
    public void InvalidConfigurationsAreRejected(int configRotation, int serverIdLength, int nonceLength, int keyLength, int trailing)
    {
        Assert.ThrowsAny<ArgumentException>(() => new QuicLbConnectionIdGenerator(configRotation, new byte[serverIdLength], nonceLength, new byte[keyLength], false, trailing));
    }

    [Fact]
    public void WorkerTagsCoverEveryByteValueOfTheirClass()
    {
        for (int workers = 1; workers <= 7; workers++)
        {
            for (int worker = 0; worker < workers; worker++)
            {
                var values = new HashSet<byte>();
                for (int r = 0; r < 256; r++)
                {
                    byte tag = WorkerTaggedConnectionIdGenerator.Tag((byte)r, worker, workers);
                    Assert.Equal(worker, tag % workers);
                    values.Add(tag);
                }
                Assert.Equal(Enumerable.Range(0, 256).Count(v => v % workers == worker), values.Count);
            }
        }
    }

    /// <summary>
    /// End to end in the simulator: a server endpoint with a QUIC-LB generator (encrypted, four passes) hands out only IDs a
    /// load balancer routes to it: its handshake SCID, the IDs of its NEW_CONNECTION_ID frames, and so every short header
    /// the client sends, including after the client moves to another of the server's IDs.
    /// </summary>
    [Fact]
    public void EveryIdOnTheWireRoutesToTheServer()
    {
        byte[] sid = [0x31, 0x44, 0x1a];
        byte[] key = Convert.FromHexString("fdf726a9893ec05c0632d3956680baf0");
        using var generator = new QuicLbConnectionIdGenerator(1, sid, 5, key, encodeLength: false);
        using var decoder = new QuicLbDecoder(1, sid.Length, 5, key);
        using var pair = new QuicPair(seed: 1701, configure: p => p.ServerConnectionIdGenerator = generator);
        int shortHeaders = 0;
        var failures = new List<string>();
        pair.Network.Interceptor = d =>
        {
            ReadOnlySpan<byte> data = d.Data;
            if (d.To.Equals(pair.ServerAddress) && !PacketFirstByte.IsLongHeader(data[0]))
            {
                shortHeaders++;
                ReadOnlySpan<byte> dcid = data.Slice(1, generator.Length);
                if (decoder.DecodeServerId(dcid) is not { } decoded || !decoded.AsSpan().SequenceEqual(sid)) failures.Add(Convert.ToHexString(dcid));
            }
            return InterceptAction.Pass;
        };
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!;
        pair.RunUntil(() => client.IsHandshakeConfirmed && client.PeerConnectionIdCount > 1, 1_000_000);
        Assert.True(client.MigrateLocalAddress(pair.Network.NowUs)); // moves to the next server ID
        Assert.True(client.TryOpenStream(false, out long stream));
        client.WriteStream(stream, new byte[20_000], fin: true);
        pair.RunUntil(() => false, 300_000);

        Connection server = pair.ServerConnection!;
        Assert.Equal(sid, decoder.DecodeServerId(server.InitialSourceId.Span));
        Assert.True(server.LocalIds.Active.Count > 1);
        foreach (IssuedConnectionId issued in server.LocalIds.Active) Assert.Equal(sid, decoder.DecodeServerId(issued.Id.Span));
        Assert.True(shortHeaders > 10, $"only {shortHeaders} short headers seen");
        Assert.Empty(failures);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
    }
}
