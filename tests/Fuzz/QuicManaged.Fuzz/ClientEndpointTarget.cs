using System;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Fuzz;

/// <summary>
/// Stateful target, client side: a client <see cref="Endpoint"/> (production core, <see cref="FakeCryptoHandshake"/>)
/// has sent its first Initial; the fuzzer plays the server. Input: records <c>kind(1) length(2, big-endian)
/// body(length)</c> as in <see cref="EndpointTarget"/>: kind bits 0-1 = raw datagram (Retry, Version Negotiation,
/// stateless reset, anything) or frames sealed with the server's Initial / Handshake / 1-RTT keys (Initial keys from
/// the client's Destination Connection ID, the others the fake handshake's); bit 2 = from another address; bits 4-7 =
/// virtual time advance in 25 ms steps. The client's output is drained after each record; once its handshake
/// completes the client application opens a stream and reads what arrives. Any exception is a crash.
/// </summary>
internal static class ClientEndpointTarget
{
    /// <summary>The Source Connection ID the fuzzed server's sealed packets carry.</summary>
    public static readonly byte[] ServerCid = [0x5e, 0x5e, 0x5e, 0x5e, 0x01, 0x02, 0x03, 0x04];

    private static NetworkAddress ServerAddress => new([127, 0, 0, 1], 443);
    private static NetworkAddress OtherAddress => new([127, 0, 0, 2], 443);

    private static StreamTableOptions Streams => new()
    {
        InitialMaxData = 1 << 20,
        InitialMaxStreamDataBidiLocal = 256 * 1024,
        InitialMaxStreamDataBidiRemote = 256 * 1024,
        InitialMaxStreamDataUni = 256 * 1024,
        MaxStreamsBidi = 100,
        MaxStreamsUni = 100,
    };

    private sealed class Client : IDisposable
    {
        public readonly byte[] Buffer = new byte[64 * 1024];
        public readonly byte[] Packet = new byte[64 * 1024];
        public readonly Endpoint Endpoint = new(new EndpointOptions { IsServer = false, Random = new SeededRandomSource(4) });
        public readonly Connection Connection;
        public long NowUs = 1_000_000;
        public uint Version = QuicVersion.V1;
        public byte[] OriginalDcid = [];
        public byte[] ClientScid = [];

        public Client()
        {
            var options = new ConnectionOptions { Random = new SeededRandomSource(1), Name = "client", MaxDatagramSize = 1452, Streams = Streams };
            Connection = Endpoint.Connect(options, new FakeCryptoHandshake(isServer: false), ServerAddress, NowUs);
            Drain(learn: true);
        }

        public void Drain(bool learn = false)
        {
            for (int n = 0; n < 64 && Endpoint.TrySend(Buffer, NowUs, out OutgoingDatagram datagram); n++)
            {
                if (learn && OriginalDcid.Length == 0 && LongHeader.TryParse(Buffer.AsSpan(0, datagram.Length), out LongHeader header))
                {
                    Version = header.Version;
                    OriginalDcid = header.DestinationConnectionId.ToArray();
                    ClientScid = header.SourceConnectionId.ToArray();
                }
            }
        }

        public void Dispose() => Endpoint.Dispose();
    }

    /// <summary>The client's first Initial's Destination Connection ID (deterministic: seeded randomness), for seeds.</summary>
    public static byte[] LearnConnectionIds(out byte[] clientScid)
    {
        using var client = new Client();
        clientScid = client.ClientScid;
        return client.OriginalDcid;
    }

    public static void Run(byte[] input)
    {
        using var c = new Client();
        using InitialKeys initial = InitialKeys.Create(c.Version, c.OriginalDcid);
        using PacketProtectionKeys handshake = Sealer.FakeKeys("s hs", c.Version);
        using PacketProtectionKeys oneRtt = Sealer.FakeKeys("s ap", c.Version);
        long initialPn = 0, handshakePn = 0, oneRttPn = 0;
        long streamId = -1;
        var rest = new ReadOnlySpan<byte>(input);
        while (rest.Length >= 3)
        {
            byte kind = rest[0];
            int length = Math.Min((rest[1] << 8) | rest[2], rest.Length - 3);
            ReadOnlySpan<byte> body = rest.Slice(3, length);
            rest = rest.Slice(3 + length);
            Advance(c, (kind >> 4) * 25_000L);
            int written = (kind & 3) switch
            {
                0 => Copy(body, c.Packet),
                1 => Sealer.Long(c.Packet, PacketType.Initial, c.Version, c.ClientScid, ServerCid, [], initial.Server, initialPn++, body, 0),
                2 => Sealer.Long(c.Packet, PacketType.Handshake, c.Version, c.ClientScid, ServerCid, [], handshake, handshakePn++, body, 0),
                _ => Sealer.Short(c.Packet, c.ClientScid, oneRtt, oneRttPn++, body),
            };
            if (written > 0) c.Endpoint.Receive(c.Packet.AsSpan(0, written), (kind & 4) != 0 ? OtherAddress : ServerAddress, c.NowUs);
            Application(c, ref streamId);
            c.Drain();
        }

        for (int i = 0; i < 8; i++)
        {
            Advance(c, 100_000);
            Application(c, ref streamId);
            c.Drain();
        }

        if (Environment.GetEnvironmentVariable("FUZZ_DEBUG") is not null)
        {
            Console.Error.WriteLine($"endpoint-client: complete={c.Connection.IsHandshakeComplete} phase={c.Connection.Phase} error={c.Connection.Error} stream={streamId}");
        }
    }

    private static void Application(Client c, ref long streamId)
    {
        Connection connection = c.Connection;
        if (streamId < 0 && connection.IsHandshakeComplete && connection.TryOpenStream(unidirectional: false, out long opened))
        {
            streamId = opened;
            connection.WriteStream(streamId, "GET /"u8, fin: true);
        }

        for (int n = 0; n < 256 && connection.TryDequeueEvent(out ConnectionEvent e); n++)
        {
            if (e.Kind is not (ConnectionEventKind.StreamOpened or ConnectionEventKind.StreamReadable)) continue;
            for (int reads = 0; reads < 16; reads++)
            {
                if (connection.ReadStream(e.StreamId, c.Packet, out bool fin, out bool reset, out _) == 0 || fin || reset) break;
            }
        }
    }

    private static void Advance(Client c, long deltaUs)
    {
        c.NowUs += Math.Max(deltaUs, 1);
        if (c.Endpoint.NextTimeoutUs <= c.NowUs) c.Endpoint.OnTimeout(c.NowUs);
    }

    private static int Copy(ReadOnlySpan<byte> body, byte[] destination)
    {
        body.CopyTo(destination);
        return body.Length;
    }

    /// <summary>A server's side of the fake handshake, then 1-RTT frames: the seed that completes the handshake.</summary>
    public static byte[] HandshakeSeed(byte[] moreOneRttFrames)
    {
        byte[] odcid = LearnConnectionIds(out _);
        byte[] parameters = new TransportParameters
        {
            OriginalDestinationConnectionId = odcid,
            InitialSourceConnectionId = ServerCid,
            InitialMaxData = 1 << 20,
            InitialMaxStreamDataBidiLocal = 65536,
            InitialMaxStreamDataBidiRemote = 65536,
            InitialMaxStreamDataUni = 65536,
            InitialMaxStreamsBidi = 10,
            InitialMaxStreamsUni = 10,
            ActiveConnectionIdLimit = 4,
            StatelessResetToken = new byte[16],
        }.Encode()!;
        var records = new List<byte>();
        void Record(byte kind, byte[] body)
        {
            records.Add(kind);
            records.Add((byte)(body.Length >> 8));
            records.Add((byte)body.Length);
            records.AddRange(body);
        }

        byte[] ee = [3, (byte)(parameters.Length >> 8), (byte)parameters.Length, .. parameters];
        byte[] fin = [4, 0, 32, .. new byte[32]];
        Record(1, Crypto(0, [2, 0, 0]));
        Record(2, [.. Crypto(0, ee), .. Crypto(ee.Length, fin)]);
        Record(3, [0x1e, .. moreOneRttFrames]); // HANDSHAKE_DONE, then the rest
        return records.ToArray();
    }

    private static byte[] Crypto(int offset, byte[] data)
    {
        byte[] frame = new byte[1 + 8 + 8 + data.Length];
        var writer = new QuicWriter(frame);
        if (!new CryptoFrame((ulong)offset, data).TryWrite(ref writer)) throw new InvalidOperationException("CRYPTO frame");
        return writer.Written.ToArray();
    }
}
