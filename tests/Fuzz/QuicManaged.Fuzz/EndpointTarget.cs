using System;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Fuzz;

/// <summary>
/// Stateful target: a server <see cref="Endpoint"/> (production core, <see cref="FakeCryptoHandshake"/> for TLS) that a
/// real client endpoint first talks to, then receives a sequence of fuzzed datagrams.
/// <para>Input: byte 0 bit 0 set = the client's handshake runs to completion first (an established connection);
/// clear = only the client's first Initial was delivered (a connection in its handshake). Then records, each
/// <c>kind(1) length(2, big-endian) body(length)</c>. kind bits 0-1: 0 = body is a raw datagram; 1 = body is frames
/// sealed in an Initial packet (client Initial keys, padded to 1200 bytes); 2 = frames in a Handshake packet; 3 =
/// frames in a 1-RTT packet (the fake handshake's keys), so frames reach the connection past packet protection. Bit 2:
/// from another client address (migration, NAT rebinding). Bits 4-7: virtual time advances by that many times 25 ms
/// first (timers fire). After every record the server's output is delivered to the real client and back once.</para>
/// Any exception escaping the endpoints is a crash.
/// </summary>
internal static class EndpointTarget
{
    private const int MaxRounds = 64;
    // Properties, not static fields: nothing instrumented may run before SharpFuzz sets up AFL's shared memory.
    private static NetworkAddress ServerAddress => new([127, 0, 0, 1], 443);
    private static NetworkAddress ClientAddress => new([127, 0, 0, 1], 50000);
    private static NetworkAddress OtherClientAddress => new([127, 0, 0, 1], 50001);

    private static StreamTableOptions Streams => new()
    {
        InitialMaxData = 1 << 20,
        InitialMaxStreamDataBidiLocal = 256 * 1024,
        InitialMaxStreamDataBidiRemote = 256 * 1024,
        InitialMaxStreamDataUni = 256 * 1024,
        MaxStreamsBidi = 100,
        MaxStreamsUni = 100,
    };

    private sealed class Factory : IServerConnectionFactory
    {
        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        {
            options = new ConnectionOptions { Random = new SeededRandomSource(2), Name = "server", MaxDatagramSize = 1452, Streams = Streams };
            handshake = new FakeCryptoHandshake(isServer: true);
            return true;
        }
    }

    private sealed class State : IDisposable
    {
        public readonly byte[] Buffer = new byte[64 * 1024];
        public readonly byte[] Packet = new byte[64 * 1024];
        public Endpoint Server = null!;
        public Endpoint Client = null!;
        public long NowUs = 1_000_000;
        public uint Version = QuicVersion.V1;
        public byte[] OriginalDcid = [];
        public byte[] ClientScid = [];
        public byte[]? ServerScid;
        public long InitialPn = 1000, HandshakePn = 1000, OneRttPn = 1 << 20;
        public InitialKeys? InitialKeys;
        public PacketProtectionKeys? HandshakeKeys, OneRttKeys;

        public void Dispose()
        {
            Client.Dispose();
            Server.Dispose();
            InitialKeys?.Dispose();
            HandshakeKeys?.Dispose();
            OneRttKeys?.Dispose();
        }
    }

    public static void Run(byte[] input)
    {
        if (input.Length == 0) return;
        using var s = new State
        {
            Server = new Endpoint(new EndpointOptions { IsServer = true, Random = new SeededRandomSource(3) }, new Factory()),
            Client = new Endpoint(new EndpointOptions { IsServer = false, Random = new SeededRandomSource(4) }),
        };
        var clientOptions = new ConnectionOptions { Random = new SeededRandomSource(1), Name = "client", MaxDatagramSize = 1452, Streams = Streams };
        Connection client = s.Client.Connect(clientOptions, new FakeCryptoHandshake(isServer: false), ServerAddress, s.NowUs);

        // The client's first flight: learn the connection IDs and version from it.
        FromClient(s, learn: true);
        if ((input[0] & 1) != 0)
        {
            for (int round = 0; round < MaxRounds && !client.IsHandshakeComplete; round++)
            {
                Pump(s);
            }

            if (!client.IsHandshakeComplete) throw new InvariantViolationException("the fake handshake completes on a lossless exchange");

            // A real stream from the client, so the server holds stream state the fuzzed frames can collide with.
            if (client.TryOpenStream(unidirectional: false, out long streamId)) client.WriteStream(streamId, "GET /"u8, fin: false);
            Pump(s);
        }

        s.HandshakeKeys = Sealer.FakeKeys("c hs", s.Version);
        s.OneRttKeys = Sealer.FakeKeys("c ap", s.Version);
        s.InitialKeys = InitialKeys.Create(s.Version, s.OriginalDcid);

        var rest = new ReadOnlySpan<byte>(input, 1, input.Length - 1);
        while (rest.Length >= 3)
        {
            byte kind = rest[0];
            int length = Math.Min((rest[1] << 8) | rest[2], rest.Length - 3);
            ReadOnlySpan<byte> body = rest.Slice(3, length);
            rest = rest.Slice(3 + length);
            Advance(s, (kind >> 4) * 25_000L);
            NetworkAddress from = (kind & 4) != 0 ? OtherClientAddress : ClientAddress;
            int written = (kind & 3) switch
            {
                0 => Copy(body, s.Packet),
                1 => Sealer.Long(s.Packet, PacketType.Initial, s.Version, s.ServerScid ?? s.OriginalDcid, s.ClientScid, [], s.InitialKeys.Client, s.InitialPn++, body,
                    1200 - 64),
                2 => Sealer.Long(s.Packet, PacketType.Handshake, s.Version, s.ServerScid ?? s.OriginalDcid, s.ClientScid, [], s.HandshakeKeys, s.HandshakePn++, body, 0),
                _ => Sealer.Short(s.Packet, s.ServerScid ?? s.OriginalDcid, s.OneRttKeys, s.OneRttPn++, body),
            };
            if (written > 0) s.Server.Receive(s.Packet.AsSpan(0, written), from, s.NowUs);
            Pump(s);
        }

        if (Environment.GetEnvironmentVariable("FUZZ_DEBUG") is not null)
        {
            Console.Error.WriteLine($"endpoint: client complete={client.IsHandshakeComplete} phase={client.Phase}; server connections={s.Server.Connections.Count} " +
                (s.Server.Connections.Count > 0 ? $"complete={s.Server.Connections[0].IsHandshakeComplete} phase={s.Server.Connections[0].Phase} error={s.Server.Connections[0].Error}" : ""));
        }

        // Let the connection run its timers out a little (loss detection, idle, closing).
        for (int i = 0; i < 8; i++)
        {
            Advance(s, 100_000);
            Pump(s);
        }
    }

    private static int Copy(ReadOnlySpan<byte> body, byte[] destination)
    {
        body.CopyTo(destination);
        return body.Length;
    }

    private static void Advance(State s, long deltaUs)
    {
        s.NowUs += Math.Max(deltaUs, 1);
        if (s.Server.NextTimeoutUs <= s.NowUs) s.Server.OnTimeout(s.NowUs);
        if (s.Client.NextTimeoutUs <= s.NowUs) s.Client.OnTimeout(s.NowUs);
    }

    /// <summary>
    /// The server application: accepts connections, reads every readable stream, and answers each finished
    /// client-initiated bidirectional stream, as a request/response server does.
    /// </summary>
    private static void Serve(State s)
    {
        while (s.Server.TryAccept(out _))
        {
        }

        foreach (Connection connection in s.Server.Connections)
        {
            for (int n = 0; n < 256 && connection.TryDequeueEvent(out ConnectionEvent e); n++)
            {
                if (e.Kind is not (ConnectionEventKind.StreamOpened or ConnectionEventKind.StreamReadable)) continue;
                bool fin = false, reset = false;
                for (int reads = 0; reads < 16; reads++)
                {
                    if (connection.ReadStream(e.StreamId, s.Packet, out fin, out reset, out _) == 0 || fin || reset) break;
                }

                if (fin && (e.StreamId & 2) == 0) connection.WriteStream(e.StreamId, "200"u8, fin: true);
            }
        }
    }

    /// <summary>One exchange: the client's output to the server, the server's output to the client.</summary>
    private static void Pump(State s)
    {
        Serve(s);
        Advance(s, 1_000);
        FromClient(s, learn: false);
        for (int n = 0; n < MaxRounds && s.Server.TrySend(s.Buffer, s.NowUs, out OutgoingDatagram datagram); n++)
        {
            if (!datagram.Remote.Equals(ClientAddress)) continue;
            for (int offset = 0; offset < datagram.Length; offset += datagram.SegmentSize)
            {
                Span<byte> segment = s.Buffer.AsSpan(offset, Math.Min(datagram.SegmentSize, datagram.Length - offset));
                if (s.ServerScid is null && LongHeader.TryParse(segment, out LongHeader header) && header.Type == PacketType.Initial)
                {
                    s.ServerScid = header.SourceConnectionId.ToArray();
                }

                s.Client.Receive(segment, ServerAddress, s.NowUs);
            }
        }
    }

    private static void FromClient(State s, bool learn)
    {
        for (int n = 0; n < MaxRounds && s.Client.TrySend(s.Buffer, s.NowUs, out OutgoingDatagram datagram); n++)
        {
            for (int offset = 0; offset < datagram.Length; offset += datagram.SegmentSize)
            {
                Span<byte> segment = s.Buffer.AsSpan(offset, Math.Min(datagram.SegmentSize, datagram.Length - offset));
                if (learn && s.OriginalDcid.Length == 0 && LongHeader.TryParse(segment, out LongHeader header))
                {
                    s.Version = header.Version;
                    s.OriginalDcid = header.DestinationConnectionId.ToArray();
                    s.ClientScid = header.SourceConnectionId.ToArray();
                }

                s.Server.Receive(segment, ClientAddress, s.NowUs);
            }
        }
    }
}
