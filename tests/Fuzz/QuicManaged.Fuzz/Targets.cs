using System;
using System.Buffers.Binary;
using System.Net;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace QuicManaged.Fuzz;

/// <summary>Raised by a target when a decoder broke one of its own invariants: AFL sees it as a crash.</summary>
internal sealed class InvariantViolationException : Exception
{
    public InvariantViolationException(string message) : base(message)
    {
    }
}

/// <summary>
/// One fuzz target per untrusted input. Each takes the whole input; a decoder may only answer with its documented
/// result values (a bool, a TransportErrorCode, a TlsAlert, an AddressTokenValidation): any exception escaping a
/// target is a crash. Targets are deterministic (seeded randomness, virtual time) so a crash replays.
/// </summary>
internal static class Targets
{
    public static readonly IReadOnlyDictionary<string, Action<byte[]>> All = new SortedDictionary<string, Action<byte[]>>(StringComparer.Ordinal)
    {
        ["packet"] = Packet,
        ["frames"] = Frames,
        ["transport-parameters"] = TransportParametersTarget,
        ["tls"] = Tls,
        ["token"] = Token,
        ["client-hello-peek"] = ClientHelloPeekTarget,
        ["endpoint"] = EndpointTarget.Run,
        ["endpoint-client"] = ClientEndpointTarget.Run,
        ["tls-server"] = TlsEngineTargets.Server,
        ["tls-client"] = TlsEngineTargets.Client,
        ["http3"] = HttpAndDumperTargets.Http3,
        ["qpack"] = HttpAndDumperTargets.Qpack,
        ["qpack-session"] = HttpAndDumperTargets.QpackSession,
        ["capture"] = HttpAndDumperTargets.Capture,
    };

    private static void Check(bool condition, string what)
    {
        if (!condition) throw new InvariantViolationException(what);
    }

    // ---------------- packet: headers, coalescing, header protection and packet protection removal ----------------

    /// <summary>
    /// The input is one datagram. Walks its coalesced packets (strict and greased fixed bit), parses each header form,
    /// and for long headers derives the Initial keys from the DCID (RFC 9001 §5.2) and removes header and packet
    /// protection with both sides' keys, as a server does with a client's first datagram; short headers are opened
    /// with the fake handshake's 1-RTT keys. Whatever decrypts goes through the frame decoders.
    /// </summary>
    public static void Packet(byte[] input)
    {
        foreach (bool greased in (ReadOnlySpan<bool>)[false, true])
        {
            var walk = new CoalescedPacketEnumerator(input, greased);
            int covered = 0;
            int count = 0;
            while (walk.MoveNext())
            {
                Check(walk.CurrentOffset == covered && !walk.Current.IsEmpty, "coalesced walk must advance contiguously");
                covered += walk.Current.Length;
                Check(++count <= input.Length, "coalesced walk must terminate");
                OnePacket(walk.Current, greased);
            }

            Check(covered <= input.Length && (covered == input.Length || walk.StoppedOnMalformedPacket), "coalesced walk covers the datagram");
        }

        if (VersionNegotiationPacket.TryParse(input, out VersionNegotiationPacket vn))
        {
            int versions = 0;
            foreach (uint version in vn.Versions)
            {
                versions++;
                _ = version;
            }

            Check(versions == vn.VersionCount, "version count");
        }

        if (StatelessReset.TryGetTokenCandidate(input, out ReadOnlySpan<byte> token))
        {
            Check(token.Length == 16, "stateless reset token length");
        }
    }

    private static void OnePacket(ReadOnlySpan<byte> packet, bool greased)
    {
        if (PacketFirstByte.IsLongHeader(packet[0]))
        {
            if (!LongHeader.TryParse(packet, out LongHeader header, greased)) return;
            Check(header.TotalLength <= packet.Length, "long header within the packet");
            if (header.Type == PacketType.Retry)
            {
                if (RetryPacket.TryParse(packet, out RetryPacket retry, greased))
                {
                    _ = RetryIntegrity.Verify(retry.Version, Sealer.Rfc9001Dcid, packet);
                }

                return;
            }

            if (header.Type is not (PacketType.Initial or PacketType.Handshake or PacketType.ZeroRtt) ||
                !QuicVersion.IsSupported(header.Version) || header.DestinationConnectionId.Length > ConnectionId.MaxLength)
            {
                return;
            }

            using InitialKeys keys = InitialKeys.Create(header.Version, header.DestinationConnectionId);
            Open(header.Packet, header.PacketNumberOffset, keys.Client, header.Type);
            Open(header.Packet, header.PacketNumberOffset, keys.Server, header.Type);
        }
        else
        {
            foreach (int cidLength in (ReadOnlySpan<int>)[0, 8])
            {
                if (!ShortHeader.TryParse(packet, cidLength, out ShortHeader header, greased)) continue;
                Check(header.PacketNumberOffset == 1 + cidLength, "short header packet number offset");
                Open(packet, header.PacketNumberOffset, OneRttKeys.Value, PacketType.OneRtt);
            }
        }
    }

    private static readonly Lazy<PacketProtectionKeys> OneRttKeys = new(() => Sealer.FakeKeys("c ap", QuicVersion.V1));

    private static void Open(ReadOnlySpan<byte> packet, int pnOffset, PacketProtectionKeys keys, PacketType type)
    {
        byte[] copy = packet.ToArray();
        if (!keys.TryRemoveHeaderProtection(copy, pnOffset, out int pnLength, out uint truncated)) return;
        Check(pnLength is >= 1 and <= 4, "packet number length");
        long pn = PacketNumber.Decode(-1, truncated, pnLength);
        Check(pn >= 0, "decoded packet number");
        int headerLength = pnOffset + pnLength;
        if (!keys.TryDecrypt(copy, headerLength, (ulong)pn, copy.Length - headerLength, out int plaintextLength)) return;
        if (Environment.GetEnvironmentVariable("FUZZ_DEBUG") is not null) Console.Error.WriteLine($"packet: opened {type} pn={pn} plaintext={plaintextLength}");
        DecodeFrames(copy.AsSpan(headerLength, plaintextLength), type);
    }

    // ---------------- frames: every frame decoder through FrameTypes ----------------

    /// <summary>The input is a packet payload: every frame is decoded, checked against the packet types that allow it,
    /// and what decoded must re-encode (the connection echoes and retransmits decoded values).</summary>
    public static void Frames(byte[] input)
    {
        DecodeFrames(input, PacketType.OneRtt);
    }

    [ThreadStatic]
    private static byte[]? t_reencoded;

    [ThreadStatic]
    private static AckRange[]? t_ranges;

    private static void DecodeFrames(ReadOnlySpan<byte> payload, PacketType packetType)
    {
        var handler = new FrameChecker(t_reencoded ??= new byte[65536 + 64], packetType);
        TransportErrorCode error = FrameReader.Read(payload, ref handler, out _, out _);
        Check(error is TransportErrorCode.NoError or TransportErrorCode.FrameEncodingError or TransportErrorCode.ProtocolViolation, $"unexpected frame error {error}");
    }

    /// <summary>Checks each decoded frame's invariants and that it re-encodes (into a scratch buffer, one frame at a time).</summary>
    private struct FrameChecker : IFrameHandler
    {
        private readonly byte[] _buffer;
        private readonly PacketType _packetType;
        private int _lastOffset;

        public FrameChecker(byte[] buffer, PacketType packetType)
        {
            _buffer = buffer;
            _packetType = packetType;
            _lastOffset = -1;
        }

        public TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset)
        {
            Check(offset > _lastOffset, "a frame must consume input");
            _lastOffset = offset;
            if (typeError != TransportErrorCode.NoError) return typeError;
            Check(FrameTypes.IsKnown(type), "FrameTypes.TryRead accepted an unknown type");
            _ = FrameTypes.CheckAllowedIn(type, _packetType);
            _ = FrameTypes.IsAckEliciting(type);
            _ = FrameTypes.IsProbing(type);
            return TransportErrorCode.NoError;
        }

        public readonly TransportErrorCode OnPadding(int length)
        {
            var w = Writer();
            return Written(PaddingFrame.TryWrite(ref w, length), FrameType.Padding);
        }

        public readonly TransportErrorCode OnPing()
        {
            var w = Writer();
            return Written(PingFrame.TryWrite(ref w), FrameType.Ping);
        }

        public readonly TransportErrorCode OnHandshakeDone()
        {
            var w = Writer();
            return Written(HandshakeDoneFrame.TryWrite(ref w), FrameType.HandshakeDone);
        }

        public readonly TransportErrorCode OnAck(in AckFrame ack)
        {
            int count = 0;
            long previousSmallest = long.MaxValue;
            foreach (AckRange range in ack.Ranges)
            {
                Check(range.Smallest >= 0 && range.Smallest <= range.Largest && range.Largest < previousSmallest, "ACK ranges descend without overlap");
                previousSmallest = range.Smallest;
                count++;
            }

            Check(count == ack.RangeCount, "ACK range count");
            Check(ack.SmallestAcknowledged == previousSmallest, "ACK smallest");
            AckRange[] ranges = t_ranges is { } r && r.Length >= count ? r : (t_ranges = new AckRange[Math.Max(count, 256)]);
            Check(ack.CopyRangesTo(ranges) == count, "ACK CopyRangesTo");
            Check(AckFrame.GetEncodedLength(ranges.AsSpan(0, count), ack.AckDelay, ack.EcnCounts) <= ack.EncodedLength, "ACK re-encodes no longer");
            var w = Writer();
            return Written(AckFrame.TryWrite(ref w, ranges.AsSpan(0, count), ack.AckDelay, ack.EcnCounts), FrameType.Ack);
        }

        public readonly TransportErrorCode OnResetStream(in ResetStreamFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.ResetStream); }

        public readonly TransportErrorCode OnStopSending(in StopSendingFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.StopSending); }

        public readonly TransportErrorCode OnCrypto(in CryptoFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.Crypto); }

        public readonly TransportErrorCode OnNewToken(in NewTokenFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.NewToken); }

        public readonly TransportErrorCode OnStream(in StreamFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.Stream); }

        public readonly TransportErrorCode OnMaxData(in MaxDataFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.MaxData); }

        public readonly TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.MaxStreamData); }

        public readonly TransportErrorCode OnMaxStreams(in MaxStreamsFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.MaxStreamsBidirectional); }

        public readonly TransportErrorCode OnDataBlocked(in DataBlockedFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.DataBlocked); }

        public readonly TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.StreamDataBlocked); }

        public readonly TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.StreamsBlockedBidirectional); }

        public readonly TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.NewConnectionId); }

        public readonly TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.RetireConnectionId); }

        public readonly TransportErrorCode OnPathChallenge(in PathChallengeFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.PathChallenge); }

        public readonly TransportErrorCode OnPathResponse(in PathResponseFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.PathResponse); }

        public readonly TransportErrorCode OnConnectionClose(in ConnectionCloseFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.ConnectionClose); }

        public readonly TransportErrorCode OnDatagram(in DatagramFrame f) { var w = Writer(); return Written(f.TryWrite(ref w), FrameType.Datagram); }

        private readonly QuicWriter Writer() => new(_buffer);

        private static TransportErrorCode Written(bool written, FrameType type)
        {
            Check(written, $"a decoded {type} frame must re-encode");
            return TransportErrorCode.NoError;
        }
    }

    // ---------------- transport parameters ----------------

    /// <summary>First byte: bit 0 = sent by the server. The rest is a quic_transport_parameters extension body.</summary>
    public static void TransportParametersTarget(byte[] input)
    {
        if (input.Length == 0) return;
        bool fromServer = (input[0] & 1) != 0;
        TransportErrorCode error = TransportParameters.TryDecode(input.AsSpan(1), fromServer, out TransportParameters? parameters, out string? reason);
        if (error != TransportErrorCode.NoError)
        {
            Check(error == TransportErrorCode.TransportParameterError && reason is not null && parameters is null, $"transport parameter failure shape ({error})");
            return;
        }

        Check(parameters is not null, "decoded parameters");
        byte[]? encoded = parameters!.Encode();
        Check(encoded is not null, "decoded parameters re-encode");
        Check(TransportParameters.TryDecode(encoded, fromServer, out TransportParameters? again, out _) == TransportErrorCode.NoError, "re-encoded parameters decode");
        Check(encoded.AsSpan().SequenceEqual(again!.Encode()), "re-encoding is stable");
    }

    // ---------------- TLS handshake messages ----------------

    /// <summary>First byte selects the message (mod 7); the rest is its body (after the 4-byte handshake header).</summary>
    public static void Tls(byte[] input)
    {
        if (input.Length == 0) return;
        ReadOnlySpan<byte> body = input.AsSpan(1);
        switch (input[0] % 7)
        {
            case 0:
                if (ClientHello.TryDecode(body, out ClientHello hello) is null)
                {
                    _ = hello.ServerName;
                    _ = hello.HasAlpn ? hello.ApplicationProtocols.Count : 0;
                }

                break;
            case 1:
                _ = ServerHello.TryDecode(body, out _);
                break;
            case 2:
                _ = EncryptedExtensions.TryDecode(body, out _);
                break;
            case 3:
                _ = CertificateMessage.TryDecode(body, out _);
                break;
            case 4:
                _ = CertificateVerifyMessage.TryDecode(body, out _);
                break;
            case 5:
                _ = NewSessionTicket.TryDecode(body, out _);
                break;
            default:
                _ = CertificateRequest.TryDecode(body, out _);
                break;
        }
    }

    // ---------------- Retry and NEW_TOKEN tokens ----------------

    // Lazy: nothing instrumented may run before SharpFuzz sets up AFL's shared memory (in Fuzzer.Run).
    private static readonly Lazy<AddressValidationTokenCodec> LazyTokenCodec = new(() => new AddressValidationTokenCodec(new SeededRandomSource(7)));
    private static readonly IPEndPoint TokenClient = new(IPAddress.Loopback, 50000);
    private static readonly IPEndPoint TokenOtherClient = new(IPAddress.IPv6Loopback, 50000);

    /// <summary>
    /// Mode byte (mod 3): 0 = the rest is a token from the network, validated as is. 1 and 2 = the codec seals a Retry
    /// (1) or NEW_TOKEN (2) token from fuzzed fields (issue time, validation time, connection IDs, address) and it
    /// must validate to exactly what was sealed (or Expired by the clock): the plaintext parser behind the AEAD.
    /// </summary>
    public static void Token(byte[] input)
    {
        if (input.Length == 0) return;
        AddressValidationTokenCodec codec = LazyTokenCodec.Value;
        ReadOnlySpan<byte> rest = input.AsSpan(1);
        int mode = input[0] % 3;
        if (mode == 0)
        {
            AddressTokenValidation result = codec.Validate(rest, TokenClient, 1_000_000, out _, out _, out _);
            Check(result is AddressTokenValidation.Invalid or AddressTokenValidation.Valid or AddressTokenValidation.Expired, "token result");
            return;
        }

        if (rest.Length < 16 + 2) return;
        long issued = BinaryPrimitives.ReadInt64BigEndian(rest);
        long now = BinaryPrimitives.ReadInt64BigEndian(rest.Slice(8));
        int odcidLength = Math.Min(rest[16] % (ConnectionId.MaxLength + 1), rest.Length - 18);
        ReadOnlySpan<byte> after = rest.Slice(18 + odcidLength);
        int rscidLength = Math.Min(rest[17] % (ConnectionId.MaxLength + 1), after.Length);
        var odcid = new ConnectionId(rest.Slice(18, odcidLength));
        var rscid = new ConnectionId(after.Slice(0, rscidLength));
        bool otherAddress = (input[0] & 0x80) != 0;

        Span<byte> token = stackalloc byte[AddressValidationTokenCodec.MaxTokenLength];
        int length = mode == 1
            ? codec.WriteRetryToken(token, TokenClient, odcid, rscid, issued)
            : codec.WriteNewToken(token, TokenClient, issued);
        AddressTokenValidation validation = codec.Validate(token.Slice(0, length), otherAddress ? TokenOtherClient : TokenClient, now,
            out AddressTokenKind kind, out ConnectionId originalDestination, out ConnectionId retrySource);
        if (otherAddress)
        {
            Check(validation == AddressTokenValidation.Invalid, "a token moved to another address is invalid");
            return;
        }

        Check(validation is AddressTokenValidation.Valid or AddressTokenValidation.Expired, $"an untampered token opens ({validation})");
        Check(kind == (mode == 1 ? AddressTokenKind.Retry : AddressTokenKind.NewToken), "token kind");
        if (mode == 1)
        {
            Check(originalDestination.Span.SequenceEqual(odcid.Span) && retrySource.Span.SequenceEqual(rscid.Span), "Retry token connection IDs");
        }
    }

    // ---------------- ClientHelloPeek ----------------

    private static readonly Lazy<InitialKeys> PeekKeys = new(() => InitialKeys.Create(QuicVersion.V1, Sealer.Rfc9001Dcid));

    /// <summary>
    /// Mode byte: bit 0 clear = the rest is a datagram from the network, peeked as is. Bit 0 set = the rest is Initial
    /// plaintext (frames), sealed with the RFC 9001 Initial keys into one 1200-byte packet, or, with bit 1 set, into
    /// two coalesced packets split at the second byte's position (reassembly across packets); then peeked.
    /// </summary>
    public static void ClientHelloPeekTarget(byte[] input)
    {
        if (input.Length == 0) return;
        if ((input[0] & 1) == 0)
        {
            Check(ClientHelloPeek.Peek(input.AsSpan(1)) is var raw && (raw.Authenticated || raw.ServerName is null), "unauthenticated peek learns nothing");
            return;
        }

        ReadOnlySpan<byte> frames = input.AsSpan(1);
        byte[] datagram = new byte[2 * 1400 + frames.Length];
        int length;
        PacketProtectionKeys keys = PeekKeys.Value.Client;
        if ((input[0] & 2) != 0 && frames.Length > 1)
        {
            int split = Math.Min(frames[0], frames.Length - 1);
            ReadOnlySpan<byte> first = frames.Slice(1, split);
            ReadOnlySpan<byte> second = frames.Slice(1 + split);
            length = Sealer.Long(datagram, PacketType.Initial, QuicVersion.V1, Sealer.Rfc9001Dcid, [], [], keys, 0, first, 0);
            length += Sealer.Long(datagram.AsSpan(length), PacketType.Initial, QuicVersion.V1, Sealer.Rfc9001Dcid, [], [], keys, 1, second, 1100);
        }
        else
        {
            length = Sealer.Long(datagram, PacketType.Initial, QuicVersion.V1, Sealer.Rfc9001Dcid, [], [], keys, 0, frames, 1162);
        }

        InitialPeek peek = ClientHelloPeek.Peek(datagram.AsSpan(0, length));
        if (Environment.GetEnvironmentVariable("FUZZ_DEBUG") is not null) Console.Error.WriteLine($"peek: {peek.Authenticated} {peek.ServerName} {peek.ApplicationProtocols?.Count}");
        Check(peek.Authenticated || length == 0, "a sealed Initial authenticates");
    }
}
