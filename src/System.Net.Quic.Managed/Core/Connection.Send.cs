using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>Smallest room worth starting another frame in.</summary>
    private const int MinFrameRoom = 16;

    private const int MaxAckRangesSent = 32;

    /// <summary>
    /// Writes the next datagram into <paramref name="buffer"/> (Initial, Handshake and 1-RTT packets coalesced, RFC 9000 §12.2),
    /// or returns false when nothing may be sent now. Call until it returns false.
    /// </summary>
    public bool TrySend(Span<byte> buffer, long nowUs, out int length)
    {
        length = 0;
        if (_close.Phase is ConnectionPhase.Closed or ConnectionPhase.Draining) return false;
        if (HoldsFirstFlight(nowUs)) return false;

        int max = Math.Min(buffer.Length, _path.MaxDatagramSize);
        if (!_path.Amplification.IsAddressValidated)
        {
            long remaining = _path.Amplification.Remaining;
            if (remaining < max) max = (int)remaining;
            // During the handshake a server's datagrams are full-size or none (§8.1); on a new path after it (§9.3) a
            // smaller one may go (a PATH_CHALLENGE is padded only as far as the limit allows, §8.2.1).
            if (max < (_handshake.IsConfirmed ? MinShortDatagramSize : MinInitialDatagramSize))
            {
                // RFC 9000 §8.1: blocked until the client sends more (or its address is validated).
                _recovery.SetAmplificationLimited(true, nowUs);
                return false;
            }
        }
        Span<byte> datagram = buffer.Slice(0, max);

        // Every packet of the datagram carries the datagram's ECN marking (OutgoingEcn, read by the I/O layer before this call).
        bool marked = _path.SendingEcnMarked = _path.Ecn.ShouldMark;
        int written = _close.Phase == ConnectionPhase.Closing ? WriteClosePackets(datagram, nowUs)
            : TryWriteMtuProbe(buffer, nowUs) is int probe and > 0 ? probe : WriteCoalesced(datagram, closing: false, nowUs);
        if (written == 0)
        {
            NoteNothingToSend(nowUs);
            return false;
        }
        if (marked) _path.Ecn.OnMarkedDatagramSent();

        length = written;
        Statistics.DatagramsSent++;
        Statistics.BytesSent += written;
        QuicTelemetryCounters.DatagramSent(written);
        if (!_path.Amplification.IsAddressValidated) _path.Amplification.OnDatagramSent(written);
        if (_handshake.TakeInitialDiscard())
        {
            // RFC 9001 §4.9.1: a client discards Initial keys when it first sends a Handshake packet.
            DiscardSpace(PacketNumberSpace.Initial, nowUs);
        }
        return true;
    }

    /// <summary>
    /// Coalesces one packet per space that has something to send (RFC 9000 §12.2) into <paramref name="datagram"/>, in
    /// space order: ordinary packets, or, when <paramref name="closing"/>, CONNECTION_CLOSE packets. The datagram's last
    /// packet is padded when the datagram carries an Initial.
    /// </summary>
    private int WriteCoalesced(Span<byte> datagram, bool closing, long nowUs)
    {
        int written = 0;
        bool containsInitial = false;
        for (int i = 0; i < _spaces.Length; i++)
        {
            PacketSpaceState space = _spaces[i];
            if (!Includes(space, closing, nowUs)) continue;
            bool last = true;
            for (int j = i + 1; j < _spaces.Length; j++) last &= !Includes(_spaces[j], closing, nowUs);
            containsInitial |= space.Space == PacketNumberSpace.Initial;
            // RFC 9000 §14.1: a datagram carrying an Initial packet is padded to 1200 bytes (we pad the last packet).
            int padTo = last && containsInitial ? MinInitialDatagramSize - written : 0;
            int n = closing ? WriteClosePacket(space, datagram.Slice(written), padTo, nowUs) : WritePacket(space, datagram.Slice(written), padTo, nowUs);
            if (n == 0) continue;
            written += n;
            // RFC 9001 §4.9.1 (the Initial keys go after this datagram); close packets leave them, so a close repeated
            // before the handshake completes still reaches a server that has only Initial keys.
            if (!closing && !IsServer && space.Space == PacketNumberSpace.Handshake) _handshake.OnHandshakePacketWritten();
            if (datagram.Length - written < 64) break;
        }
        return written;
    }

    /// <summary>Whether the datagram being built gets a packet of <paramref name="space"/>.</summary>
    private bool Includes(PacketSpaceState space, bool closing, long nowUs) => closing ? CloseGoesIn(space) : WantsToSend(space, nowUs);

    /// <summary>
    /// While closing, before the handshake is confirmed CONNECTION_CLOSE goes in every space we have keys for (RFC 9000
    /// §10.2.3); a client without 1-RTT keys yet leaves the application space out.
    /// </summary>
    private bool CloseGoesIn(PacketSpaceState space)
    {
        if (space.Discarded || !space.CanSend) return false;
        if (space.Space != PacketNumberSpace.ApplicationData) return !_handshake.IsConfirmed;
        return _handshake.IsCompleted || IsServer;
    }

    /// <summary>True when this space has something to put in a packet now.</summary>
    private bool WantsToSend(PacketSpaceState space, long nowUs)
    {
        if (space.Discarded || !space.CanSend) return false;
        if (space.Received.HasNewPacketsToAck && space.Received.ShouldSendAck(nowUs)) return true;
        if (space.ProbesPending > 0) return true;
        if (!CanSendAckEliciting(nowUs)) return false;
        if (space.CryptoSend.HasRetransmission || space.CryptoSend.HasNewData) return true;
        if (space.Space != PacketNumberSpace.ApplicationData) return false;
        return HasApplicationFramesToSend(nowUs);
    }

    private bool HasApplicationFramesToSend(long nowUs)
    {
        if (_handshake.HandshakeDonePending || _path.Responses.Count > 0 || _path.ChallengePending || _rawFramesForTesting is not null || _newTokenToSend is not null) return true;
        // A client sends application data before its handshake completed only as 0-RTT, and then only stream frames.
        if (!_handshake.IsCompleted && !IsServer) return CanSendEarlyData && _streams.HasSendableStreams;
        if (_streams.NeedsMaxData || _streams.HasSendableStreams || _keepAlivePending || HasDatagramsToSend) return true;
        if (MaxStreamsWantPacket(nowUs)) return true;
        if (_streams.LocalBidiLimit.NeedsStreamsBlocked || _streams.LocalUniLimit.NeedsStreamsBlocked) return true;
        if (_streams.ConnectionSendCredit.NeedsBlockedFrame && _streams.HasSendableStreams) return true;
        return _localIds.HasPendingAdvertisement || _peerIds.HasPendingRetirement;
    }

    private bool CanSendAckEliciting(long nowUs)
    {
        ICongestionController cc = _recovery.CongestionController;
        if (cc.BytesInFlight >= cc.CongestionWindow) return false;
        long next = _path.Pacer.GetNextSendTimeUs(_path.MaxDatagramSize, nowUs, cc.CongestionWindow, _recovery.Rtt.SmoothedRttUs, cc.InSlowStart);
        if (next > nowUs)
        {
            _path.PacingBlockedUntilUs = next;
            return false;
        }
        return true;
    }

    /// <summary>Builds and protects one packet of <paramref name="space"/> in <paramref name="destination"/>. Returns its length, 0 if nothing was written.</summary>
    private int WritePacket(PacketSpaceState space, Span<byte> destination, int padTo, long nowUs)
    {
        if (!TryBeginPacket(space, destination, tracked: true, out PacketBuilder packet)) return 0;
        bool probe = space.ProbesPending > 0;
        _pathFrameInPacket = false;
        packet.AckEliciting = WriteFrames(ref packet, probe, nowUs);
        if (packet.IsEmpty)
        {
            _framePool.Return(packet.Frames!);
            return 0;
        }
        // RFC 9000 §8.2.1, §8.2.2: a datagram with PATH_CHALLENGE or PATH_RESPONSE is expanded to 1200 bytes (as far as
        // this datagram's room, capped by the new path's amplification limit, allows): it checks the path's MTU too.
        if (_pathFrameInPacket) padTo = Math.Max(padTo, Math.Min(destination.Length, MinInitialDatagramSize));

        if (packet.AckEliciting && space.ProbesPending > 0)
        {
            space.ProbesPending--;
            // RFC 9002 §6.2.4: with two probes owed in a handshake space, the second repeats the unacknowledged CRYPTO
            // data instead of a bare PING, so either datagram getting through unblocks the peer.
            if (space.ProbesPending > 0 && space.Space != PacketNumberSpace.ApplicationData) RequeueUnackedCrypto(space);
        }
        int total = packet.FinishAndTrack(this, padTo, nowUs);
        _keepAlivePending = false;
        return total;
    }

    /// <summary>
    /// The bookkeeping of a packet just finished (<see cref="PacketBuilder.FinishAndTrack"/>): ECN, recovery (which keeps
    /// the packet's <see cref="SentFrames"/> until it is acknowledged or lost), pacing, the idle timer, qlog and statistics.
    /// </summary>
    internal void OnPacketSent(in PacketBuilder packet, int total, bool inFlight, bool pathProbe, long nowUs)
    {
        PacketNumberSpace space = packet.Space.Space;
        SentFrames frames = packet.Frames!;
        bool empty = frames.IsEmpty;
        bool marked = _path.SendingEcnMarked;
        if (marked) _path.Ecn.OnMarkedPacketSent(space);
        _recovery.OnPacketSent(space, packet.PacketNumber, nowUs, total, packet.AckEliciting, inFlight,
            new SentPacketMeta(empty ? null : frames), ecnMarked: marked, pathProbe: pathProbe);
        if (empty) _framePool.Return(frames);
        if (inFlight)
        {
            ICongestionController cc = _recovery.CongestionController;
            _path.Pacer.OnPacketSent(total, nowUs, cc.CongestionWindow, _recovery.Rtt.SmoothedRttUs, cc.InSlowStart);
        }
        if (packet.AckEliciting) _idle.OnAckElicitingPacketSent(nowUs);
        if (_trace.Tracer is not null) TracePacketSent(packet.ZeroRtt ? "0RTT" : QlogPacketType(space), packet.PacketNumber, total, frames, nowUs);
        Statistics.PacketsSent++;
        if (packet.ZeroRtt)
        {
            _earlyData.LargestZeroRttPacket = packet.PacketNumber;
            Statistics.ZeroRttPacketsSent++;
        }
    }

    /// <summary>
    /// Adds the frames of one packet in priority order, each recorded in the packet's <see cref="SentFrames"/>. Returns
    /// true when any is ack-eliciting. A 0-RTT packet carries stream data only: no ACK, CRYPTO or connection-level
    /// control frames (RFC 9000 §12.4, Table 3).
    /// </summary>
    private bool WriteFrames(ref PacketBuilder packet, bool probe, long nowUs)
    {
        PacketSpaceState space = packet.Space;
        bool zeroRtt = packet.ZeroRtt;
        SentFrames frames = packet.Frames!;
        ref QuicWriter writer = ref packet.Writer;
        bool ackEliciting = false;
        if (space.Received.HasNewPacketsToAck && !zeroRtt) WriteAck(ref packet, nowUs);
        bool mayAddData = probe || CanSendAckEliciting(nowUs);
        if (!mayAddData) return false;

        if (space.Space == PacketNumberSpace.ApplicationData && !zeroRtt)
        {
            ackEliciting |= WriteApplicationControlFrames(ref writer, frames, nowUs);
        }
        if (!zeroRtt) ackEliciting |= WriteCrypto(space, ref writer, frames);
        if (space.Space == PacketNumberSpace.ApplicationData && (_handshake.IsCompleted || IsServer || zeroRtt))
        {
            ackEliciting |= WriteApplicationData(ref writer, frames, zeroRtt, nowUs);
        }
        if (!ackEliciting && (probe || (_keepAlivePending && space.Space == PacketNumberSpace.ApplicationData)) && writer.TryWriteByte((byte)FrameType.Ping))
        {
            frames.Ping = true;
            ackEliciting = true;
        }
        return ackEliciting;
    }

    /// <summary>
    /// Every frame is written only after its size was checked against the room left, so a failed write is a bug in the
    /// size check: fail loudly (the driver reports it) rather than send a packet whose records do not match its bytes.
    /// </summary>
    private static void RequireWritten(bool written, FrameType frame)
    {
        if (!written) throw new InvalidOperationException($"A {frame} frame did not fit after its size check.");
    }

    /// <summary>Adds an ACK frame of the packet's space, leaving <paramref name="reserve"/> bytes for what follows.</summary>
    private void WriteAck(ref PacketBuilder packet, long nowUs, int reserve = 0)
    {
        PacketSpaceState space = packet.Space;
        ref QuicWriter writer = ref packet.Writer;
        Span<AckRange> ranges = stackalloc AckRange[MaxAckRangesSent];
        int count = space.Received.WriteAckRanges(ranges);
        if (count == 0) return;
        ulong delay = (ulong)(space.Received.GetAckDelayUs(nowUs) >> (int)TransportParameters.DefaultAckDelayExponent);
        EcnCounts? ecn = AckEcnCounts(space);
        // Too many ranges for the room left: send fewer (the oldest are dropped first).
        while (count > 0 && AckFrame.GetEncodedLength(ranges.Slice(0, count), delay, ecn) > writer.Remaining - reserve) count--;
        if (count == 0 || !AckFrame.TryWrite(ref writer, ranges.Slice(0, count), delay, ecn)) return;
        space.Received.OnAckSent();
        if (packet.Frames is { } frames) frames.LargestAcknowledged = ranges[0].Largest;
    }

    private bool WriteCrypto(PacketSpaceState space, ref QuicWriter writer, SentFrames frames)
    {
        bool wrote = false;
        SendBuffer crypto = space.CryptoSend;
        while (writer.Remaining > MinFrameRoom && crypto.TryPeekNextToSend(long.MaxValue, out long offset, out long available, out _))
        {
            int max = CryptoFrame.GetMaxDataLength(writer.Remaining, (ulong)offset);
            if (max <= 0) break;
            int length = (int)Math.Min(available, max);
            if (!CryptoFrame.TryWriteHeader(ref writer, (ulong)offset, length)) break;
            RequireWritten(writer.TryReserve(length, out Span<byte> data), FrameType.Crypto);
            if (!crypto.TryTakeNextToSend(data, long.MaxValue, out long takenOffset, out int taken, out _)
                || taken != length || takenOffset != offset)
            {
                throw new InvalidOperationException("CRYPTO send buffer returned other data than it announced.");
            }
            frames.Crypto.Add(new SentCryptoRange(offset, length));
            wrote = true;
        }
        return wrote;
    }

    private bool WriteApplicationControlFrames(ref QuicWriter writer, SentFrames frames, long nowUs)
    {
        bool wrote = WriteRawFramesForTesting(ref writer, frames);
        if (_handshake.HandshakeDonePending && writer.TryWriteByte((byte)FrameType.HandshakeDone))
        {
            _handshake.OnHandshakeDoneSent();
            frames.Retransmits.HandshakeDone = true;
            wrote = true;
        }
        while (_path.Responses.Count > 0 && writer.Remaining >= PathResponseFrame.EncodedLength)
        {
            RequireWritten(new PathResponseFrame(_path.Responses.Dequeue()).TryWrite(ref writer), FrameType.PathResponse);
            frames.PathResponses++;
            _pathFrameInPacket = true;
            wrote = true;
        }
        wrote |= WritePathChallenge(ref writer, frames, nowUs);
        wrote |= WriteNewToken(ref writer, frames);
        if (_streams.NeedsMaxData && writer.Remaining >= MaxDataFrame.MaxEncodedLength)
        {
            long max = _streams.CommitMaxData(nowUs, _recovery.Rtt.SmoothedRttUs);
            RequireWritten(new MaxDataFrame((ulong)max).TryWrite(ref writer), FrameType.MaxData);
            frames.Retransmits.MaxData = max;
            wrote = true;
        }
        wrote |= WriteMaxStreams(ref writer, frames, _streams.RemoteBidiLimit, bidirectional: true);
        wrote |= WriteMaxStreams(ref writer, frames, _streams.RemoteUniLimit, bidirectional: false);
        if (!MaxStreamsDue) _maxStreamsHoldUntilUs = long.MaxValue;
        wrote |= WriteStreamsBlocked(ref writer, frames, _streams.LocalBidiLimit, bidirectional: true);
        wrote |= WriteStreamsBlocked(ref writer, frames, _streams.LocalUniLimit, bidirectional: false);
        SendFlowCredit credit = _streams.ConnectionSendCredit;
        var dataBlocked = new DataBlockedFrame((ulong)credit.MaxData);
        if (credit.NeedsBlockedFrame && _streams.HasSendableStreams && writer.Remaining >= dataBlocked.EncodedLength)
        {
            RequireWritten(dataBlocked.TryWrite(ref writer), FrameType.DataBlocked);
            credit.OnBlockedFrameSent(credit.MaxData);
            frames.Retransmits.DataBlocked = credit.MaxData;
            wrote = true;
        }
        Span<byte> token = stackalloc byte[StatelessResetToken.Length];
        while (writer.Remaining >= NewConnectionIdFrame.MaxEncodedLength && _localIds.TryDequeueAdvertisement(out IssuedConnectionId issued))
        {
            issued.ResetToken.CopyTo(token);
            RequireWritten(NewConnectionIdFrame.TryWrite(ref writer, issued.SequenceNumber, 0, issued.Id.Span, token), FrameType.NewConnectionId);
            frames.Retransmits.NewConnectionIds.Add(issued.SequenceNumber);
            wrote = true;
        }
        while (writer.Remaining >= RetireConnectionIdFrame.MaxEncodedLength && _peerIds.TryDequeueRetirement(out ulong sequence))
        {
            RequireWritten(new RetireConnectionIdFrame(sequence).TryWrite(ref writer), FrameType.RetireConnectionId);
            frames.Retransmits.RetireConnectionIds.Add(sequence);
            wrote = true;
        }
        return wrote;
    }

    /// <summary>
    /// Whether MAX_STREAMS makes a packet of its own: at once when the peer needs it
    /// (<see cref="RemoteStreamLimit.NeedsMaxStreamsPacket"/>), else once it was held back for max_ack_delay (the MaxStreamsHold
    /// timer, armed here the first time it is passed by). Meanwhile any packet sent carries it.
    /// </summary>
    private bool MaxStreamsWantPacket(long nowUs)
    {
        if (!MaxStreamsDue) return false;
        if (_streams.RemoteBidiLimit.NeedsMaxStreamsPacket || _streams.RemoteUniLimit.NeedsMaxStreamsPacket) return true;
        if (_maxStreamsHoldUntilUs == long.MaxValue) _maxStreamsHoldUntilUs = nowUs + _options.MaxAckDelayUs;
        return _maxStreamsHoldUntilUs <= nowUs;
    }

    /// <summary>MAX_STREAMS is due for either stream type (sent alone or with another packet, see <see cref="MaxStreamsWantPacket"/>).</summary>
    private bool MaxStreamsDue => _streams.RemoteBidiLimit.NeedsMaxStreams || _streams.RemoteUniLimit.NeedsMaxStreams;

    private static bool WriteMaxStreams(ref QuicWriter writer, SentFrames frames, RemoteStreamLimit limit, bool bidirectional)
    {
        if (!limit.NeedsMaxStreams || writer.Remaining < MaxStreamsFrame.MaxEncodedLength) return false;
        long max = limit.CommitMaxStreams();
        RequireWritten(new MaxStreamsFrame(bidirectional, (ulong)max).TryWrite(ref writer), bidirectional ? FrameType.MaxStreamsBidirectional : FrameType.MaxStreamsUnidirectional);
        if (bidirectional) frames.Retransmits.MaxStreamsBidirectional = max;
        else frames.Retransmits.MaxStreamsUnidirectional = max;
        return true;
    }

    private static bool WriteStreamsBlocked(ref QuicWriter writer, SentFrames frames, LocalStreamLimit limit, bool bidirectional)
    {
        if (!limit.NeedsStreamsBlocked) return false;
        long max = limit.MaxStreams;
        var frame = new StreamsBlockedFrame(bidirectional, (ulong)max);
        if (writer.Remaining < frame.EncodedLength) return false;
        RequireWritten(frame.TryWrite(ref writer), bidirectional ? FrameType.StreamsBlockedBidirectional : FrameType.StreamsBlockedUnidirectional);
        limit.OnStreamsBlockedSent(max);
        if (bidirectional) frames.Retransmits.StreamsBlockedBidirectional = max;
        else frames.Retransmits.StreamsBlockedUnidirectional = max;
        return true;
    }

    private bool WriteStreamFrames(ref QuicWriter writer, SentFrames frames, long nowUs)
    {
        bool wrote = false;
        // Priority order (StreamTable scheduler: urgent lane of control frames and retransmissions, then urgency levels).
        // Served streams are re-queued at the end, so each queue entry is visited at most once per packet; one waiting
        // only for connection credit stays queued.
        int visits = _streams.SendableCount;
        while (visits-- > 0 && writer.Remaining > MinFrameRoom && _streams.TryDequeueSendable(out TransportStream? stream, out bool urgentOnly))
        {
            int visit = -1;
            wrote |= WriteStreamControlFrames(stream, ref writer, frames, ref visit, nowUs);
            SendStream? send = stream.Send;
            // From the urgent lane only lost data goes now; new data waits for the stream's priority level.
            while (send is not null && writer.Remaining > MinFrameRoom && (!urgentOnly || send.HasRetransmission)
                && send.TryPeekNextToSend(out long offset, out long available, out bool fin))
            {
                int max = StreamFrame.GetMaxDataLength(writer.Remaining, (ulong)stream.Id, (ulong)offset, hasLength: true);
                if (max < 0 || (max == 0 && !(fin && available == 0))) break;
                int length = (int)Math.Min(available, max);
                bool frameFin = fin && length == available;
                if (!StreamFrame.TryWriteHeader(ref writer, (ulong)stream.Id, (ulong)offset, length, frameFin, hasLength: true)) break;
                RequireWritten(writer.TryReserve(length, out Span<byte> data), FrameType.Stream);
                if (!send.TryTakeNextToSend(data, out long takenOffset, out int taken, out bool takenFin)
                    || taken != length || takenOffset != offset || takenFin != frameFin)
                {
                    throw new InvalidOperationException("Stream send buffer returned other data than it announced.");
                }
                frames.AddStreamRange(ref visit, stream.Id, offset, length, frameFin);
                wrote = true;
                if (frameFin || length == 0) break;
            }
            _streams.OnServed(stream);
        }
        _streams.EndSendRound();
        return wrote;
    }

    private bool WriteStreamControlFrames(TransportStream stream, ref QuicWriter writer, SentFrames frames, ref int visit, long nowUs)
    {
        bool wrote = false;
        SendStream? send = stream.Send;
        ReceiveStream? receive = stream.Receive;
        if (send is not null && send.NeedsResetFrame)
        {
            var reset = new ResetStreamFrame((ulong)stream.Id, send.ResetErrorCode, (ulong)send.ResetFinalSize);
            if (writer.Remaining >= reset.EncodedLength)
            {
                RequireWritten(reset.TryWrite(ref writer), FrameType.ResetStream);
                send.OnResetFrameSent();
                frames.StreamVisit(ref visit, stream.Id).ResetStream = true;
                wrote = true;
            }
        }
        if (receive is not null && receive.NeedsStopSendingFrame)
        {
            var stop = new StopSendingFrame((ulong)stream.Id, receive.StopSendingErrorCode);
            if (writer.Remaining >= stop.EncodedLength)
            {
                RequireWritten(stop.TryWrite(ref writer), FrameType.StopSending);
                receive.OnStopSendingFrameSent();
                frames.StreamVisit(ref visit, stream.Id).StopSending = true;
                wrote = true;
            }
        }
        if (receive is not null && receive.NeedsMaxStreamData && writer.Remaining >= MaxStreamDataFrame.MaxEncodedLength)
        {
            long max = receive.CommitMaxStreamData(nowUs, _recovery.Rtt.SmoothedRttUs);
            RequireWritten(new MaxStreamDataFrame((ulong)stream.Id, (ulong)max).TryWrite(ref writer), FrameType.MaxStreamData);
            frames.StreamVisit(ref visit, stream.Id).MaxStreamData = max;
            wrote = true;
        }
        if (send is not null && send.NeedsStreamDataBlocked)
        {
            long limit = send.BlockedLimit;
            var blocked = new StreamDataBlockedFrame((ulong)stream.Id, (ulong)limit);
            if (writer.Remaining >= blocked.EncodedLength)
            {
                RequireWritten(blocked.TryWrite(ref writer), FrameType.StreamDataBlocked);
                send.OnStreamDataBlockedSent(limit);
                frames.StreamVisit(ref visit, stream.Id).DataBlocked = limit;
                wrote = true;
            }
        }
        return wrote;
    }

    /// <summary>
    /// While closing, every packet carries only CONNECTION_CLOSE (RFC 9000 §10.2.1). Before the handshake is confirmed it
    /// goes in every space we have keys for, as the peer may not have the later keys yet (§10.2.3); there an application
    /// close becomes a transport APPLICATION_ERROR so the reason is not revealed before the handshake authenticated the peer.
    /// </summary>
    private int WriteClosePackets(Span<byte> datagram, long nowUs)
    {
        if (!_closeFramePending || Error is null) return 0;
        _closeFramePending = false;
        return WriteCoalesced(datagram, closing: true, nowUs);
    }

    private int WriteClosePacket(PacketSpaceState space, Span<byte> destination, int padTo, long nowUs)
    {
        if (!TryBeginPacket(space, destination, tracked: false, out PacketBuilder packet)) return 0;

        // The peer's last packets are acknowledged in the closing packet itself, ahead of CONNECTION_CLOSE (ACK is
        // allowed there, RFC 9000 §12.4): the data we read to its end before closing counts as received by its sender
        // (its WritesClosed completes) instead of being lost with a delayed ACK that never went out. Every copy of the
        // close carries it, so a resend in the closing period delivers it too.
        bool ack = space.Received.RangeCount > 0;
        if (ack) WriteAck(ref packet, nowUs, reserve: MaxCloseFrameLength);

        ConnectionError error = Error!;
        Span<byte> reason = stackalloc byte[64];
        int reasonLength = 0;
        if (error.Reason is not null)
        {
            reasonLength = System.Text.Encoding.UTF8.GetBytes(error.Reason.AsSpan(0, Math.Min(error.Reason.Length, 64)), reason);
        }
        bool application = error.Source == ConnectionErrorSource.Application;
        bool written = application && space.Space == PacketNumberSpace.ApplicationData
            ? ConnectionCloseFrame.TryWrite(ref packet.Writer, true, error.Code, 0, reason.Slice(0, reasonLength))
            : application
                ? ConnectionCloseFrame.TryWrite(ref packet.Writer, false, (ulong)TransportErrorCode.ApplicationError, 0, default)
                : ConnectionCloseFrame.TryWrite(ref packet.Writer, false, error.Code, error.TriggeringFrameType, reason.Slice(0, reasonLength));
        if (!written) return 0;

        int length = packet.Finish(padTo, out _);
        if (_trace.Tracer is not null && length > 0)
        {
            ulong close = application && space.Space == PacketNumberSpace.ApplicationData ? (ulong)FrameType.ConnectionCloseApplication : (ulong)FrameType.ConnectionClose;
            _trace.LastEventUs = nowUs;
            _trace.Tracer.PacketSent(nowUs, QlogPacketType(space.Space), packet.PacketNumber, length, ack ? [(ulong)FrameType.Ack, close] : [close]);
        }
        return length;
    }

    /// <summary>Room a CONNECTION_CLOSE frame needs at most: type, code, frame type, reason length and a 64-byte reason.</summary>
    private const int MaxCloseFrameLength = 1 + 8 + 8 + 8 + 64;

    /// <summary>
    /// Begins the next packet of <paramref name="space"/> in <paramref name="destination"/> (<see cref="PacketBuilder.TryBegin"/>
    /// with this connection's IDs, version and Retry token), greasing its Fixed Bit when the peer allows it. A
    /// <paramref name="tracked"/> packet gets a <see cref="SentFrames"/> record from the pool.
    /// </summary>
    private bool TryBeginPacket(PacketSpaceState space, Span<byte> destination, bool tracked, out PacketBuilder packet)
    {
        ReadOnlySpan<byte> token = IsServer ? default : _retryToken;
        long largestAcked = _recovery.GetTracker(space.Space).LargestAcked;
        ConnectionId destinationId = _peerIds.Active;
        if (!PacketBuilder.TryBegin(destination, space, Version, destinationId.Span, _initialSourceId.Span, token, largestAcked,
            tracked ? _framePool : null, out packet))
        {
            return false;
        }
        GreaseFixedBit(destination, space.Space, packet.ZeroRtt);
        return true;
    }
}
