using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// One packet being built in its buffer, from header to record (the model is quinn-proto's <c>packet_builder.rs</c>).
/// <see cref="TryBegin"/> writes the header and reserves the packet number; frames go through <see cref="Writer"/>,
/// which covers the buffer minus the AEAD tag so no frame can overrun it, and are recorded in <see cref="Frames"/>;
/// <see cref="FinishAndTrack"/> pads, protects and hands the packet to the connection's sent-packet bookkeeping
/// (recovery, pacing, idle timer, qlog, statistics). Close packets, which recovery does not track, end with
/// <see cref="Finish"/>. Ordinary packets, close packets and PMTU probes are all built this way.
/// </summary>
internal ref struct PacketBuilder
{
    /// <summary>Where frames are written (pass it by <c>ref</c>).</summary>
    public QuicWriter Writer;

    /// <summary>Whether an ack-eliciting frame was written (set by the writer of the frames).</summary>
    public bool AckEliciting;

    private readonly Span<byte> _packet;
    private readonly int _packetNumberLength;
    private readonly int _packetNumberOffset;
    private readonly int _payloadStart;
    private readonly int _lengthFieldOffset;

    private PacketBuilder(Span<byte> packet, PacketSpaceState space, SentFrames? frames, QuicWriter writer, long packetNumber,
        int packetNumberLength, int packetNumberOffset, int lengthFieldOffset, bool zeroRtt)
    {
        _packet = packet;
        Space = space;
        Frames = frames;
        Writer = writer;
        PacketNumber = packetNumber;
        _packetNumberLength = packetNumberLength;
        _packetNumberOffset = packetNumberOffset;
        _payloadStart = writer.Position;
        _lengthFieldOffset = lengthFieldOffset;
        ZeroRtt = zeroRtt;
    }

    /// <summary>The packet number space the packet belongs to.</summary>
    public PacketSpaceState Space { get; }

    /// <summary>What the packet carries, for recovery; null for a packet that is not tracked (CONNECTION_CLOSE).</summary>
    public SentFrames? Frames { get; }

    /// <summary>The packet number this packet will carry.</summary>
    public long PacketNumber { get; }

    /// <summary>A 0-RTT packet (long header, application space, 0-RTT keys).</summary>
    public bool ZeroRtt { get; }

    /// <summary>No frame has been written yet.</summary>
    public readonly bool IsEmpty => Writer.Position == _payloadStart;

    /// <summary>
    /// Writes the header of the next packet of <paramref name="space"/> into <paramref name="destination"/> (long header
    /// for Initial and Handshake, and for 0-RTT when the space sends it; short for 1-RTT) and reserves its packet number,
    /// encoded as short as <paramref name="largestAcked"/> allows. <paramref name="token"/> goes in an Initial header. A
    /// packet recovery will track takes its <see cref="Frames"/> record from <paramref name="pool"/>. False when the header
    /// does not fit.
    /// </summary>
    public static bool TryBegin(Span<byte> destination, PacketSpaceState space, uint version, scoped ReadOnlySpan<byte> destinationId,
        scoped ReadOnlySpan<byte> sourceId, scoped ReadOnlySpan<byte> token, long largestAcked, SentFramesPool? pool, out PacketBuilder packet)
    {
        packet = default;
        if (destination.Length < 64) return false;
        long pn = space.NextPacketNumber;
        int pnLength = Wire.PacketNumber.GetEncodedLength(pn, largestAcked);
        var writer = new QuicWriter(destination.Slice(0, destination.Length - PacketProtectionKeys.TagLength));
        int lengthFieldOffset = -1;
        bool zeroRtt = space.Space == PacketNumberSpace.ApplicationData && space.SendsZeroRtt;
        if (zeroRtt)
        {
            // RFC 9000 §17.2.3: 0-RTT uses a long header, numbered in the application space.
            if (!LongHeader.TryWrite(ref writer, PacketType.ZeroRtt, version, destinationId, sourceId, default, pnLength, out lengthFieldOffset)) return false;
        }
        else if (space.Space == PacketNumberSpace.ApplicationData)
        {
            if (!ShortHeader.TryWrite(ref writer, destinationId, spinBit: false, space.SendPhaseKeys!.KeyPhase == 1, pnLength)) return false;
        }
        else
        {
            PacketType type = space.Space == PacketNumberSpace.Initial ? PacketType.Initial : PacketType.Handshake;
            if (!LongHeader.TryWrite(ref writer, type, version, destinationId, sourceId, type == PacketType.Initial ? token : default, pnLength, out lengthFieldOffset)) return false;
        }
        int pnOffset = writer.Position;
        if (!writer.TryFill(0, pnLength)) return false;
        packet = new PacketBuilder(destination, space, pool?.Rent(), writer, pn, pnLength, pnOffset, lengthFieldOffset, zeroRtt);
        return true;
    }

    /// <summary>
    /// Finishes the packet and records it as sent: <see cref="Finish"/>, then the connection's bookkeeping of a sent
    /// packet (<c>Connection.OnPacketSent</c>; in flight when ack-eliciting or padded, RFC 9002 §2). Returns the
    /// protected length. <paramref name="pathProbe"/> marks a PMTU probe, whose loss says nothing about congestion.
    /// </summary>
    public int FinishAndTrack(Connection connection, int padTo, long nowUs, bool pathProbe = false)
    {
        int total = Finish(padTo, out bool padded);
        connection.OnPacketSent(in this, total, inFlight: AckEliciting || padded, pathProbe, nowUs);
        return total;
    }

    /// <summary>
    /// Finishes the packet: pads it (header protection sample; <paramref name="padTo"/> when set, for datagrams that must
    /// reach a size), patches the long header's Length, protects it and consumes the packet number. Returns the protected
    /// length; <paramref name="padded"/> says whether padding towards <paramref name="padTo"/> was added.
    /// </summary>
    public int Finish(int padTo, out bool padded)
    {
        int payloadLength = Writer.Position - _payloadStart;
        int pad = PaddingNeeded(_packetNumberLength, payloadLength, Writer.Position, padTo, Writer.Remaining);
        padded = pad > 0 && padTo > 0;
        if (pad > 0)
        {
            PaddingFrame.TryWrite(ref Writer, pad);
            payloadLength += pad;
        }
        if (_lengthFieldOffset >= 0)
        {
            LongHeader.TryPatchLength(_packet, _lengthFieldOffset, _packetNumberLength + payloadLength + PacketProtectionKeys.TagLength);
        }
        PacketProtectionKeys keys = ZeroRtt ? Space.ZeroRttSendKeys!
            : Space.Space == PacketNumberSpace.ApplicationData ? Space.SendPhaseKeys!.Current : Space.SendKeys!;
        int total = keys.Protect(_packet, _packetNumberOffset, _packetNumberLength, (ulong)PacketNumber, payloadLength);
        Space.NextPacketNumber = PacketNumber + 1;
        return total;
    }

    /// <summary>
    /// PADDING to add: enough for the header protection sample (RFC 9001 §5.4.2: packet number plus payload at least
    /// 4 bytes) and, when <paramref name="padTo"/> is set, to make the protected packet that long (RFC 9000 §14.1).
    /// </summary>
    private static int PaddingNeeded(int pnLength, int payloadLength, int position, int padTo, int remaining)
    {
        int pad = Math.Max(0, 4 - pnLength - payloadLength);
        if (padTo > 0) pad = Math.Max(pad, padTo - (position + PacketProtectionKeys.TagLength));
        return Math.Min(pad, remaining);
    }
}
