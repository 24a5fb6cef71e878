using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    private long _lastEventUs;

    private static string QlogPacketType(PacketNumberSpace space) => space switch
    {
        PacketNumberSpace.Initial => "initial",
        PacketNumberSpace.Handshake => "handshake",
        _ => "1RTT",
    };

    private static string QlogPacketType(PacketType type) => type switch
    {
        PacketType.Initial => "initial",
        PacketType.Handshake => "handshake",
        PacketType.ZeroRtt => "0RTT",
        _ => "1RTT",
    };

    private void TracePacketSent(string packetType, long pn, int length, SentFrameList frames, long nowUs)
    {
        _lastEventUs = nowUs;
        Span<ulong> types = stackalloc ulong[Math.Min(frames.Count, 64)];
        for (int i = 0; i < types.Length; i++) types[i] = SentFrameType(frames.Frames[i]);
        _tracer!.PacketSent(nowUs, packetType, pn, length, types);
        ICongestionController cc = _recovery.CongestionController;
        _tracer.MetricsUpdated(nowUs, _recovery.Rtt.SmoothedRttUs, _recovery.Rtt.LatestRttUs, cc.CongestionWindow, cc.BytesInFlight);
    }

    private void TracePacketReceived(PacketType type, long pn, int length, long nowUs)
    {
        _lastEventUs = nowUs;
        _tracer!.PacketReceived(nowUs, QlogPacketType(type), pn, length, System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_tracedFrameTypes));
    }

    /// <summary>The RFC 9000 frame type a retransmission record stands for (approximate for PING-class records).</summary>
    private static ulong SentFrameType(in SentFrame frame) => frame.Kind switch
    {
        SentFrameKind.Stream => (ulong)FrameType.Stream,
        SentFrameKind.Crypto => (ulong)FrameType.Crypto,
        SentFrameKind.Ack => (ulong)FrameType.Ack,
        SentFrameKind.ResetStream => (ulong)FrameType.ResetStream,
        SentFrameKind.StopSending => (ulong)FrameType.StopSending,
        SentFrameKind.MaxData => (ulong)FrameType.MaxData,
        SentFrameKind.MaxStreamData => (ulong)FrameType.MaxStreamData,
        SentFrameKind.MaxStreams => frame.Flag ? (ulong)FrameType.MaxStreamsBidirectional : (ulong)FrameType.MaxStreamsUnidirectional,
        SentFrameKind.DataBlocked => (ulong)FrameType.DataBlocked,
        SentFrameKind.StreamDataBlocked => (ulong)FrameType.StreamDataBlocked,
        SentFrameKind.StreamsBlocked => frame.Flag ? (ulong)FrameType.StreamsBlockedBidirectional : (ulong)FrameType.StreamsBlockedUnidirectional,
        SentFrameKind.NewConnectionId => (ulong)FrameType.NewConnectionId,
        SentFrameKind.RetireConnectionId => (ulong)FrameType.RetireConnectionId,
        SentFrameKind.HandshakeDone => (ulong)FrameType.HandshakeDone,
        SentFrameKind.NewToken => (ulong)FrameType.NewToken,
        _ => (ulong)FrameType.Ping,
    };
}
