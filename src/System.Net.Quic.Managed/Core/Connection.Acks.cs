using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>A packet was acknowledged: its frames' data is delivered (RFC 9000 §13.3).</summary>
    internal void OnPacketAcked(PacketNumberSpace spaceId, SentFrameList? frames)
    {
        if (frames is null) return;
        PacketSpaceState space = Space(spaceId);
        foreach (SentFrame frame in frames.Frames)
        {
            switch (frame.Kind)
            {
                case SentFrameKind.Stream:
                    if (_streams.TryGetStream(frame.StreamId, out TransportStream? stream) && stream.Send is not null)
                    {
                        stream.Send.OnStreamFrameAcked(frame.Offset, frame.Length, frame.Fin);
                        Emit(ConnectionEventKind.StreamWritable, frame.StreamId);
                        ReleaseIfClosed(stream);
                    }
                    break;
                case SentFrameKind.Crypto:
                    space.CryptoSend.OnAcked(frame.Offset, frame.Length, fin: false);
                    break;
                case SentFrameKind.Ack:
                    space.Received.OnAckOfAck(frame.LargestAcknowledged);
                    break;
                case SentFrameKind.RetireConnectionId:
                    _peerIds.OnRetirementAcked();
                    break;
                case SentFrameKind.Datagram:
                    OnDatagramAcked(frame.DatagramNumber);
                    break;
                case SentFrameKind.ResetStream:
                    if (_streams.TryGetStream(frame.StreamId, out TransportStream? reset) && reset.Send is not null)
                    {
                        reset.Send.OnResetFrameAcked();
                        Emit(ConnectionEventKind.StreamWritable, frame.StreamId);
                        ReleaseIfClosed(reset);
                    }
                    break;
            }
        }
        _framePool.Return(frames);
    }

    /// <summary>A packet was declared lost: each of its frames is queued again with current values (RFC 9000 §13.3).</summary>
    internal void OnPacketLost(PacketNumberSpace spaceId, SentFrameList? frames, long packetNumber)
    {
        Statistics.PacketsLost++;
        _trace.Tracer?.PacketLost(_trace.LastEventUs, QlogPacketType(spaceId), packetNumber);
        if (frames is null)
        {
            QuicTelemetryCounters.PacketsLostAdd(1, 0);
            return;
        }
        PacketSpaceState space = Space(spaceId);
        long retransmitted = 0;
        foreach (SentFrame frame in frames.Frames)
        {
            TransportStream? stream;
            switch (frame.Kind)
            {
                case SentFrameKind.Stream:
                    if (_streams.TryGetStream(frame.StreamId, out stream) && stream.Send is not null)
                    {
                        stream.Send.OnStreamFrameLost(frame.Offset, frame.Length, frame.Fin);
                        _streams.MarkSendable(stream);
                        retransmitted += frame.Length;
                    }
                    break;
                case SentFrameKind.Crypto:
                    space.CryptoSend.OnLost(frame.Offset, frame.Length, fin: false);
                    retransmitted += frame.Length;
                    break;
                case SentFrameKind.MaxData:
                    _streams.OnMaxDataLost(frame.Maximum);
                    break;
                case SentFrameKind.MaxStreamData:
                    if (_streams.TryGetStream(frame.StreamId, out stream) && stream.Receive is not null)
                    {
                        stream.Receive.OnMaxStreamDataLost(frame.Maximum);
                        _streams.MarkSendable(stream);
                    }
                    break;
                case SentFrameKind.MaxStreams:
                    (frame.Bidirectional ? _streams.RemoteBidiLimit : _streams.RemoteUniLimit).OnMaxStreamsLost(frame.Maximum);
                    break;
                case SentFrameKind.StreamsBlocked:
                    (frame.Bidirectional ? _streams.LocalBidiLimit : _streams.LocalUniLimit).OnStreamsBlockedLost(frame.Maximum);
                    break;
                case SentFrameKind.DataBlocked:
                    _streams.ConnectionSendCredit.OnBlockedFrameLost(frame.Maximum);
                    break;
                case SentFrameKind.StreamDataBlocked:
                    if (_streams.TryGetStream(frame.StreamId, out stream) && stream.Send is not null)
                    {
                        stream.Send.OnStreamDataBlockedLost(frame.Maximum);
                        _streams.MarkSendable(stream);
                    }
                    break;
                case SentFrameKind.ResetStream:
                    if (_streams.TryGetStream(frame.StreamId, out stream) && stream.Send is not null)
                    {
                        stream.Send.OnResetFrameLost();
                        _streams.MarkSendable(stream);
                    }
                    break;
                case SentFrameKind.StopSending:
                    if (_streams.TryGetStream(frame.StreamId, out stream) && stream.Receive is not null)
                    {
                        stream.Receive.OnStopSendingFrameLost();
                        _streams.MarkSendable(stream);
                    }
                    break;
                case SentFrameKind.NewConnectionId:
                    _localIds.OnAdvertisementLost((ulong)frame.SequenceNumber);
                    break;
                case SentFrameKind.RetireConnectionId:
                    _peerIds.OnRetirementLost((ulong)frame.SequenceNumber);
                    break;
                case SentFrameKind.HandshakeDone:
                    _handshake.QueueHandshakeDone();
                    break;
                case SentFrameKind.NewToken:
                    OnNewTokenLost();
                    break;
                case SentFrameKind.PathChallenge:
                    OnPathChallengeLost();
                    break;
                case SentFrameKind.Datagram:
                    OnDatagramLost(frame.DatagramNumber);
                    break;
            }
        }
        Statistics.StreamBytesRetransmitted += retransmitted;
        QuicTelemetryCounters.PacketsLostAdd(1, retransmitted);
        _framePool.Return(frames);
    }

    /// <summary>Before a space's packets are dropped unacknowledged, their frame lists go back to the pool.</summary>
    private void ReturnOutstandingFrameLists(PacketNumberSpace space)
    {
        var visitor = new FrameListCollector(_framePool);
        _recovery.GetTracker(space).VisitOutstanding(ref visitor);
    }

    private struct FrameListCollector : ISentPacketVisitor<SentPacketMeta>
    {
        private readonly SentFrameListPool _pool;

        public FrameListCollector(SentFrameListPool pool) => _pool = pool;

        public readonly bool Visit(in SentPacket<SentPacketMeta> packet)
        {
            if (packet.Meta.Frames is not null) _pool.Return(packet.Meta.Frames);
            return true;
        }
    }

    private void ReleaseIfClosed(TransportStream stream)
    {
        // RFC 9000 §3.3: both parts terminal. TryRelease answers true once, so StreamClosed is raised once per stream.
        if (stream.IsClosed && _streams.TryRelease(stream)) TraceStreamClosed(stream.Id);
    }
}
