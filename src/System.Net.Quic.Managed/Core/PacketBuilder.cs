using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// One packet being built in its buffer (the model is quinn-proto's <c>packet_builder.rs</c>): the header is written
/// and the packet number reserved when it is created (<c>Connection.TryBeginPacket</c>); frames go through
/// <see cref="Writer"/>, which covers the buffer minus the AEAD tag so no frame can overrun it; <see cref="Seal"/> pads,
/// patches a long header's Length, protects the packet and consumes the packet number. Ordinary packets, close packets
/// and PMTU probes are all built this way.
/// </summary>
internal ref struct PacketBuilder
{
    /// <summary>Where frames are written (pass it by <c>ref</c>).</summary>
    public QuicWriter Writer;

    private readonly Span<byte> _packet;
    private readonly PacketSpaceState _space;
    private readonly int _packetNumberLength;
    private readonly int _packetNumberOffset;
    private readonly int _payloadStart;
    private readonly int _lengthFieldOffset;

    public PacketBuilder(Span<byte> packet, PacketSpaceState space, QuicWriter writer, long packetNumber, int packetNumberLength,
        int packetNumberOffset, int lengthFieldOffset, bool zeroRtt)
    {
        _packet = packet;
        _space = space;
        Writer = writer;
        PacketNumber = packetNumber;
        _packetNumberLength = packetNumberLength;
        _packetNumberOffset = packetNumberOffset;
        _payloadStart = writer.Position;
        _lengthFieldOffset = lengthFieldOffset;
        ZeroRtt = zeroRtt;
    }

    /// <summary>The packet number this packet will carry.</summary>
    public long PacketNumber { get; }

    /// <summary>A 0-RTT packet (long header, application space, 0-RTT keys).</summary>
    public bool ZeroRtt { get; }

    /// <summary>No frame has been written yet.</summary>
    public readonly bool IsEmpty => Writer.Position == _payloadStart;

    /// <summary>
    /// Finishes the packet: pads it (header protection sample; <paramref name="padTo"/> when set, for datagrams that must
    /// reach a size), patches the long header's Length, protects it and consumes the packet number. Returns the protected
    /// length; <paramref name="padded"/> says whether padding towards <paramref name="padTo"/> was added.
    /// </summary>
    public int Seal(int padTo, out bool padded)
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
        PacketProtectionKeys keys = ZeroRtt ? _space.ZeroRttSendKeys!
            : _space.Space == PacketNumberSpace.ApplicationData ? _space.SendPhaseKeys!.Current : _space.SendKeys!;
        int total = keys.Protect(_packet, _packetNumberOffset, _packetNumberLength, (ulong)PacketNumber, payloadLength);
        _space.NextPacketNumber = PacketNumber + 1;
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
