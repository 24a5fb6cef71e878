using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// DPLPMTUD (RFC 9000 §14.3, RFC 8899): once the handshake is confirmed, PING packets padded to a probe size go out alone
/// in a datagram; an acknowledged probe raises the size every packet may use, a lost one is no congestion signal.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>The largest UDP payload this connection sends now (raised by path MTU discovery).</summary>
    public int CurrentMaxDatagramSize => _path.MaxDatagramSize;

    /// <summary>Path MTU discovery state (probes, black holes).</summary>
    internal PathMtuDiscovery PathMtu => _path.Pmtu;

    /// <summary>
    /// Writes a PMTU probe into <paramref name="buffer"/> (the whole send buffer: a probe is larger than the path's
    /// current datagram size) when one is due and the window allows it: a 1-RTT packet with a PING, padded to the probe
    /// size. Returns its length, 0 when none was written. Never on a path whose address is not validated: its three-times
    /// budget (RFC 9000 §8, §9.3) is for the path challenge and response, and a probe larger than what is left would
    /// block them.
    /// </summary>
    private int TryWriteMtuProbe(Span<byte> buffer, long nowUs)
    {
        int size = _path.Pmtu.NextProbeSize;
        if (size == 0 || size > buffer.Length || !_handshake.IsConfirmed || _close.Phase != ConnectionPhase.Open) return 0;
        if (!_path.Amplification.IsAddressValidated) return 0;
        PacketSpaceState space = Space(PacketNumberSpace.ApplicationData);
        if (space.Discarded || !space.CanSend || space.SendsZeroRtt || space.ProbesPending > 0) return 0;
        ICongestionController cc = _recovery.CongestionController;
        if (cc.AvailableWindow < size || !CanSendAckEliciting(nowUs)) return 0;

        Span<byte> destination = buffer.Slice(0, size);
        if (!TryBeginPacket(space, destination, tracked: true, out PacketBuilder packet)) return 0;
        RequireWritten(packet.Writer.TryWriteByte((byte)FrameType.Ping), FrameType.Ping);
        packet.Frames!.Ping = true;
        packet.AckEliciting = true;
        int total = packet.FinishAndTrack(this, padTo: size, nowUs, pathProbe: true);
        _path.Pmtu.OnProbeSent(total);
        return total;
    }
}
