using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// ECN (RFC 9000 §13.4, RFC 9002 §7.1): the I/O layer passes the codepoint of each received datagram and marks each
/// outgoing one as <see cref="OutgoingEcn"/> says; the connection counts received codepoints per packet number space
/// (reported in ACK_ECN frames), marks ECT(0) while validation allows, validates the peer's counts and treats a growing CE
/// count as congestion.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>The two ECN bits (RFC 3168) the next datagram <see cref="TrySend"/> writes must carry: ECT(0) or Not-ECT.</summary>
    public byte OutgoingEcn => _path.Ecn.ShouldMark ? (byte)EcnCodepoint.Ect0 : (byte)EcnCodepoint.NotEct;

    /// <summary>ECN validation of the current path (state, counts the peer reported).</summary>
    internal EcnValidator Ecn => _path.Ecn;

    /// <summary>Codepoints of the packets received in the Application Data space (what our ACK_ECN frames report).</summary>
    internal EcnCounts ReceivedEcnCounts => Space(PacketNumberSpace.ApplicationData).Received.EcnCounts;

    /// <summary>
    /// <see cref="Receive(Span{byte}, in NetworkAddress, long)"/> for a datagram whose IP header carried the ECN bits
    /// <paramref name="ecn"/> (the low two bits of the TOS / Traffic Class byte; 0 when the I/O layer cannot read them).
    /// </summary>
    public void Receive(Span<byte> datagram, in NetworkAddress remote, byte ecn, long nowUs) => Receive(datagram, remote, ecn, localPath: 0, nowUs);

    /// <summary>The ECN counts to put in an ACK of <paramref name="space"/>: null (a plain ACK) until an ECN-marked packet arrived.</summary>
    private static EcnCounts? AckEcnCounts(PacketSpaceState space)
    {
        EcnCounts c = space.Received.EcnCounts;
        return (c.Ect0 | c.Ect1 | c.Ce) == 0 ? null : c;
    }

    /// <summary>After an ACK frame was applied: validate its counts and react to CE (RFC 9000 §13.4.2.1, RFC 9002 B.7).</summary>
    private void OnAckEcn(PacketNumberSpace space, EcnCounts? counts, in AckProcessingResult result, long nowUs)
    {
        long marked = _path.AckedEcnMarked;
        _path.AckedEcnMarked = 0;
        if (result.NewlyAckedCount == 0) return;
        if (_path.Ecn.OnAck(space, counts, marked, result.LargestAckedIsNewlyAcked))
        {
            _recovery.OnEcnCongestion(result.LargestNewlyAckedTimeSentUs, nowUs);
        }
    }

    /// <summary>Sink hook: a packet recovery reported acknowledged or lost was an ECN-marked or probe packet.</summary>
    internal void OnFlaggedPacketAcked(in SentPacket<SentPacketMeta> packet)
    {
        if (packet.EcnMarked) _path.AckedEcnMarked++;
        if (packet.PathProbe)
        {
            if (_path.Pmtu.OnProbeAcknowledged(packet.Size)) _path.MaxDatagramSize = _path.Pmtu.Current;
        }
        else
        {
            _path.Pmtu.OnPacketAcknowledged(packet.Size);
        }
    }

    internal void OnFlaggedPacketLost(in SentPacket<SentPacketMeta> packet)
    {
        if (packet.EcnMarked) _path.Ecn.OnMarkedPacketLost();
        if (packet.PathProbe) _path.Pmtu.OnProbeLost(packet.Size);
        else if (packet.InFlight && _path.Pmtu.OnPacketLost(packet.Size)) _path.MaxDatagramSize = _path.Pmtu.Current;
    }
}
