using System.Buffers;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Reads the server name (SNI, RFC 6066 §3) from the ClientHello in a client's first Initial datagram, before any
/// connection exists, so a listener's options callback can choose per host (System.Net.Quic hands it the SNI too).
/// <para>
/// Initial keys are public (RFC 9001 §5.2: derived from the client's Destination Connection ID), so a server can open
/// the packet; it does so on a copy, leaving the datagram for the connection that will process it for real. CRYPTO
/// frames from offset 0 are reassembled (clients such as Chrome split and reorder them). When the ClientHello does not
/// fit in the first datagram (large key shares, e.g. post-quantum ones, spread it over two), the name is not known yet
/// and null is returned: the callback then sees an empty name rather than waiting for a second datagram.
/// </para>
/// Attacker-controlled input: every length is checked and nothing throws; anything unexpected yields null.
/// </summary>
internal static class ClientHelloPeek
{
    // More CRYPTO frames than this in one datagram is not a real client; the rest are ignored.
    private const int MaxCryptoFrames = 64;
    private const int HandshakeHeaderLength = 4;

    /// <summary>The ClientHello's host_name, or null when the datagram has none or the ClientHello is incomplete.</summary>
    public static string? TryReadServerName(ReadOnlySpan<byte> datagram) => Peek(datagram).ServerName;

    /// <summary>
    /// Opens the datagram's Initial packets on a copy: whether any authenticated (a server creates nothing for a
    /// datagram that does not), and the ClientHello's SNI and ALPN list when the whole ClientHello is there.
    /// </summary>
    public static InitialPeek Peek(ReadOnlySpan<byte> datagram)
    {
        if (datagram.IsEmpty || !PacketFirstByte.IsLongHeader(datagram[0])) return default;
        byte[] copy = ArrayPool<byte>.Shared.Rent(datagram.Length);
        byte[] crypto = ArrayPool<byte>.Shared.Rent(datagram.Length);
        try
        {
            Span<byte> packets = copy.AsSpan(0, datagram.Length);
            datagram.CopyTo(packets);
            int contiguous = ReassembleInitialCrypto(packets, crypto.AsSpan(0, datagram.Length), out bool authenticated);
            if (!authenticated) return default;
            return TryParseClientHello(crypto.AsSpan(0, contiguous), out ClientHello? hello)
                ? new InitialPeek(true, hello!.ServerName, hello.HasAlpn ? hello.ApplicationProtocols : null, hello.TransportParameters)
                : new InitialPeek(true, null, null);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
            ArrayPool<byte>.Shared.Return(crypto);
        }
    }

    /// <summary>
    /// Opens the Initial packets of <paramref name="packets"/> in place and copies their CRYPTO data, from offset 0
    /// without gaps, into <paramref name="crypto"/>. Returns how many bytes are contiguous from offset 0.
    /// </summary>
    private static int ReassembleInitialCrypto(Span<byte> packets, Span<byte> crypto, out bool authenticated)
    {
        Span<(long Offset, int Start, int Length)> frames = stackalloc (long, int, int)[MaxCryptoFrames];
        int frameCount = 0;
        authenticated = false;
        InitialKeys? keys = null;
        try
        {
            ReadOnlySpan<byte> firstDestination = default;
            uint version = 0;
            var walk = new CoalescedPacketEnumerator(packets);
            while (walk.MoveNext())
            {
                int packetStart = walk.CurrentOffset;
                if (!LongHeader.TryParse(walk.Current, out LongHeader header) || header.Type != PacketType.Initial) continue;
                if (keys is null)
                {
                    if (!QuicVersion.IsSupported(header.Version) || header.DestinationConnectionId.Length > ConnectionId.MaxLength) return 0;
                    version = header.Version;
                    firstDestination = header.DestinationConnectionId;
                    keys = InitialKeys.Create(version, firstDestination);
                }
                else if (header.Version != version || !header.DestinationConnectionId.SequenceEqual(firstDestination))
                {
                    continue; // RFC 9000 §12.2: coalesced packets share the first one's DCID; others are not ours to read
                }

                Span<byte> packet = packets.Slice(packetStart, header.TotalLength);
                if (!keys.Client.TryRemoveHeaderProtection(packet, header.PacketNumberOffset, out int pnLength, out uint truncated)) continue;
                // A client's first flight: nothing received in the space yet (largest = -1).
                long pn = PacketNumber.Decode(-1, truncated, pnLength);
                int headerLength = header.PacketNumberOffset + pnLength;
                if (!keys.Client.TryDecrypt(packet, headerLength, (ulong)pn, header.PayloadLength - pnLength, out int plaintextLength)) continue;
                authenticated = true;
                int payloadStart = packetStart + headerLength;
                if (!CollectCryptoFrames(packets.Slice(payloadStart, plaintextLength), payloadStart, frames, ref frameCount)) break;
            }
        }
        finally
        {
            keys?.Dispose();
        }

        // Reassemble from offset 0: repeatedly extend the contiguous prefix with any frame that overlaps its end.
        int contiguous = 0;
        bool progress = true;
        while (progress)
        {
            progress = false;
            for (int i = 0; i < frameCount; i++)
            {
                (long offset, int start, int length) = frames[i];
                long end = Math.Min(offset + length, crypto.Length);
                if (offset > contiguous || end <= contiguous) continue;
                int skip = (int)(contiguous - offset);
                packets.Slice(start + skip, (int)(end - contiguous)).CopyTo(crypto.Slice(contiguous));
                contiguous = (int)end;
                progress = true;
            }
        }
        return contiguous;
    }

    /// <summary>
    /// Records the CRYPTO frames of one Initial payload (positions relative to the datagram copy). Skips PADDING,
    /// PING and ACK (RFC 9000 §12.4 permits them in Initial packets); stops at anything else. Returns false when the
    /// frame table is full.
    /// </summary>
    private static bool CollectCryptoFrames(ReadOnlySpan<byte> payload, int payloadStart, Span<(long Offset, int Start, int Length)> frames, ref int frameCount)
    {
        var collector = new CryptoFrameCollector(payload, payloadStart, frames, frameCount);
        FrameReader.Read(payload, ref collector, out _, out _);
        frameCount = collector.Count;
        return !collector.Full;
    }

    /// <summary>
    /// Reads the frames of one Initial payload up to the first that is not PADDING, PING, ACK or CRYPTO (CONNECTION_CLOSE,
    /// or a frame not allowed in Initial: the rest is not a ClientHello), recording each CRYPTO frame's data position.
    /// </summary>
    private ref struct CryptoFrameCollector : IFrameHandler
    {
        private readonly ReadOnlySpan<byte> _payload;
        private readonly int _payloadStart;
        private readonly Span<(long Offset, int Start, int Length)> _frames;

        public CryptoFrameCollector(ReadOnlySpan<byte> payload, int payloadStart, Span<(long Offset, int Start, int Length)> frames, int count)
        {
            _payload = payload;
            _payloadStart = payloadStart;
            _frames = frames;
            Count = count;
        }

        public int Count { get; private set; }

        public bool Full { get; private set; }

        public readonly TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset) =>
            typeError == TransportErrorCode.NoError && type is FrameType.Padding or FrameType.Ping or FrameType.Ack or FrameType.AckEcn or FrameType.Crypto
                ? TransportErrorCode.NoError
                : TransportErrorCode.ProtocolViolation;

        public TransportErrorCode OnCrypto(in CryptoFrame frame)
        {
            if (frame.Data.IsEmpty || frame.Offset >= int.MaxValue) return TransportErrorCode.NoError;
            if (Count == _frames.Length)
            {
                Full = true;
                return TransportErrorCode.ProtocolViolation;
            }
            _payload.Overlaps(frame.Data, out int dataOffset);
            _frames[Count++] = ((long)frame.Offset, _payloadStart + dataOffset, frame.Data.Length);
            return TransportErrorCode.NoError;
        }

        public readonly TransportErrorCode OnPadding(int length) => TransportErrorCode.NoError;
        public readonly TransportErrorCode OnPing() => TransportErrorCode.NoError;
        public readonly TransportErrorCode OnAck(in AckFrame frame) => TransportErrorCode.NoError;
        public readonly TransportErrorCode OnResetStream(in ResetStreamFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnStopSending(in StopSendingFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnNewToken(in NewTokenFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnStream(in StreamFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnMaxData(in MaxDataFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnMaxStreams(in MaxStreamsFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnDataBlocked(in DataBlockedFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnPathChallenge(in PathChallengeFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnPathResponse(in PathResponseFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnConnectionClose(in ConnectionCloseFrame frame) => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnHandshakeDone() => TransportErrorCode.ProtocolViolation;
        public readonly TransportErrorCode OnDatagram(in DatagramFrame frame) => TransportErrorCode.ProtocolViolation;
    }

    /// <summary>A complete ClientHello message at the start of <paramref name="crypto"/>, decoded.</summary>
    private static bool TryParseClientHello(ReadOnlySpan<byte> crypto, out ClientHello? hello)
    {
        hello = null;
        // RFC 8446 §4: msg_type (1) + uint24 length + body.
        if (crypto.Length < HandshakeHeaderLength || crypto[0] != (byte)HandshakeType.ClientHello) return false;
        int length = (crypto[1] << 16) | (crypto[2] << 8) | crypto[3];
        if (length > crypto.Length - HandshakeHeaderLength) return false; // continues in a later datagram
        if (ClientHello.TryDecode(crypto.Slice(HandshakeHeaderLength, length), out ClientHello decoded) is not null) return false;
        hello = decoded;
        return true;
    }
}

/// <summary>
/// What <see cref="ClientHelloPeek.Peek"/> learned from a client's first datagram. <see cref="ApplicationProtocols"/>
/// is the ClientHello's ALPN list (RFC 7301), null when the ClientHello is incomplete or has none.
/// </summary>
internal readonly record struct InitialPeek(bool Authenticated, string? ServerName, System.Collections.Generic.List<byte[]>? ApplicationProtocols,
    byte[]? TransportParameters = null);
