using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>
    /// A packet was acknowledged: its frames' data is delivered (RFC 9000 §13.3). Only a few kinds care: ACK (older
    /// ranges need not be sent again), RETIRE_CONNECTION_ID, CRYPTO, RESET_STREAM, STREAM and DATAGRAM.
    /// </summary>
    internal void OnPacketAcked(PacketNumberSpace spaceId, SentFrames? frames)
    {
        if (frames is null) return;
        PacketSpaceState space = Space(spaceId);
        if (frames.LargestAcknowledged is long largest) space.Received.OnAckOfAck(largest);
        for (int i = 0; i < frames.Retransmits.RetireConnectionIds.Count; i++) _peerIds.OnRetirementAcked();
        foreach (SentCryptoRange range in frames.Crypto.Items) space.CryptoSend.OnAcked(range.Offset, range.Length, fin: false);
        if (frames.DatagramsFirst) OnDatagramsAcked(frames.Datagrams.Items);
        ReadOnlySpan<SentStreamRange> ranges = frames.StreamRanges.Items;
        foreach (ref readonly SentStreamFrames visit in frames.Streams.Items)
        {
            // One lookup per visit: a stream released by what this visit acknowledges takes nothing more from it.
            if (!_streams.TryGetStream(visit.StreamId, out TransportStream? stream) || stream.Send is null) continue;
            if (visit.ResetStream)
            {
                stream.Send.OnResetFrameAcked();
                Emit(ConnectionEventKind.StreamWritable, visit.StreamId);
                ReleaseIfClosed(stream);
            }
            foreach (SentStreamRange range in ranges.Slice(visit.FirstRange, visit.RangeCount))
            {
                if (stream.IsReleased) break;
                stream.Send.OnStreamFrameAcked(range.Offset, range.Length, range.Fin);
                Emit(ConnectionEventKind.StreamWritable, visit.StreamId);
                ReleaseIfClosed(stream);
            }
        }
        if (!frames.DatagramsFirst) OnDatagramsAcked(frames.Datagrams.Items);
        _framePool.Return(frames);
    }

    /// <summary>
    /// A packet was declared lost: each of its frames is queued again with current values (RFC 9000 §13.3), in the order
    /// they were written (the order streams are queued again in sets the order they are served).
    /// </summary>
    internal void OnPacketLost(PacketNumberSpace spaceId, SentFrames? frames, long packetNumber)
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
        Requeue(in frames.Retransmits);
        foreach (SentCryptoRange range in frames.Crypto.Items)
        {
            space.CryptoSend.OnLost(range.Offset, range.Length, fin: false);
            retransmitted += range.Length;
        }
        if (frames.DatagramsFirst) OnDatagramsLost(frames.Datagrams.Items);
        ReadOnlySpan<SentStreamRange> ranges = frames.StreamRanges.Items;
        foreach (ref readonly SentStreamFrames visit in frames.Streams.Items)
        {
            retransmitted += RequeueStream(in visit, ranges.Slice(visit.FirstRange, visit.RangeCount));
        }
        if (!frames.DatagramsFirst) OnDatagramsLost(frames.Datagrams.Items);
        Statistics.StreamBytesRetransmitted += retransmitted;
        QuicTelemetryCounters.PacketsLostAdd(1, retransmitted);
        _framePool.Return(frames);
    }

    /// <summary>
    /// Merges a lost packet's connection-level control frames back into what is pending: each owner repeats its frame
    /// when the value lost is still the current one. A new kind of control frame is added here and in <see cref="Retransmits"/>.
    /// </summary>
    private void Requeue(in Retransmits lost)
    {
        if (lost.HandshakeDone) _handshake.QueueHandshakeDone();
        if (lost.PathChallenge) OnPathChallengeLost();
        if (lost.NewToken) OnNewTokenLost();
        if (lost.MaxData is long maxData) _streams.OnMaxDataLost(maxData);
        if (lost.MaxStreamsBidirectional is long bidi) _streams.RemoteBidiLimit.OnMaxStreamsLost(bidi);
        if (lost.MaxStreamsUnidirectional is long uni) _streams.RemoteUniLimit.OnMaxStreamsLost(uni);
        if (lost.StreamsBlockedBidirectional is long bidiBlocked) _streams.LocalBidiLimit.OnStreamsBlockedLost(bidiBlocked);
        if (lost.StreamsBlockedUnidirectional is long uniBlocked) _streams.LocalUniLimit.OnStreamsBlockedLost(uniBlocked);
        if (lost.DataBlocked is long dataBlocked) _streams.ConnectionSendCredit.OnBlockedFrameLost(dataBlocked);
        foreach (ulong sequence in lost.NewConnectionIds.Items) _localIds.OnAdvertisementLost(sequence);
        foreach (ulong sequence in lost.RetireConnectionIds.Items) _peerIds.OnRetirementLost(sequence);
    }

    /// <summary>
    /// Queues again a lost packet's frames of one stream visit (control frames, then data) and marks the stream sendable
    /// after each. Returns the STREAM bytes queued again.
    /// </summary>
    private long RequeueStream(in SentStreamFrames lost, ReadOnlySpan<SentStreamRange> ranges)
    {
        // A released stream needs nothing repeated (nothing here releases one, so one lookup serves the visit).
        if (!_streams.TryGetStream(lost.StreamId, out TransportStream? stream)) return 0;
        if (lost.ResetStream && stream.Send is not null)
        {
            stream.Send.OnResetFrameLost();
            _streams.MarkSendable(stream);
        }
        if (lost.StopSending && stream.Receive is not null)
        {
            stream.Receive.OnStopSendingFrameLost();
            _streams.MarkSendable(stream);
        }
        if (lost.MaxStreamData is long max && stream.Receive is not null)
        {
            stream.Receive.OnMaxStreamDataLost(max);
            _streams.MarkSendable(stream);
        }
        if (lost.DataBlocked is long limit && stream.Send is not null)
        {
            stream.Send.OnStreamDataBlockedLost(limit);
            _streams.MarkSendable(stream);
        }
        if (stream.Send is null) return 0;
        long retransmitted = 0;
        foreach (SentStreamRange range in ranges)
        {
            stream.Send.OnStreamFrameLost(range.Offset, range.Length, range.Fin);
            _streams.MarkSendable(stream);
            retransmitted += range.Length;
        }
        return retransmitted;
    }

    /// <summary>Before a space's packets are dropped unacknowledged, their records go back to the pool.</summary>
    private void ReturnOutstandingFrames(PacketNumberSpace space)
    {
        var visitor = new SentFramesCollector(_framePool);
        _recovery.GetTracker(space).VisitOutstanding(ref visitor);
    }

    private struct SentFramesCollector : ISentPacketVisitor<SentPacketMeta>
    {
        private readonly SentFramesPool _pool;

        public SentFramesCollector(SentFramesPool pool) => _pool = pool;

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
