using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// grease_quic_bit (RFC 9287). We advertise it (unless <see cref="ConnectionOptions.GreaseQuicBit"/> is off) and then
/// accept packets whose QUIC (Fixed) Bit is 0 (§3). Once the peer advertised it, the bit of each Handshake and 1-RTT
/// packet we send is unpredictable (§3.1: "SHOULD set the QUIC Bit to an unpredictable value"). Initial and 0-RTT
/// packets keep it set: they can leave before the peer's transport parameters are known, and a server's Initial is
/// what a client sees before anything else, so those stay as RFC 9000 has them. The bit is not covered by header
/// protection (RFC 9001 §5.4.1 masks only the low bits), so it is flipped in the written header before sealing, which
/// keeps it in the AEAD's associated data exactly as sent.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>True when the packets we receive may have the Fixed Bit cleared (we advertised grease_quic_bit).</summary>
    private bool AcceptsGreasedFixedBit => _options.GreaseQuicBit;

    /// <summary>Packets of this connection sent with the Fixed Bit cleared.</summary>
    internal long GreasedPacketsSent { get; private set; }

    /// <summary>Clears the Fixed Bit of a packet just begun in <paramref name="packet"/> when the peer allows it, half the time.</summary>
    private void GreaseFixedBit(Span<byte> packet, PacketNumberSpace space, bool zeroRtt)
    {
        if (zeroRtt || space == PacketNumberSpace.Initial || PeerParameters is not { GreaseQuicBit: true }) return;
        if (_versions.GreaseBitsLeft == 0)
        {
            Span<byte> word = stackalloc byte[sizeof(ulong)];
            _random.Fill(word);
            _versions.GreaseBits = BitConverter.ToUInt64(word);
            _versions.GreaseBitsLeft = 64;
        }
        bool clear = (_versions.GreaseBits & 1) != 0;
        _versions.GreaseBits >>= 1;
        _versions.GreaseBitsLeft--;
        if (!clear) return;
        packet[0] &= unchecked((byte)~PacketFirstByte.FixedBit);
        GreasedPacketsSent++;
    }
}
