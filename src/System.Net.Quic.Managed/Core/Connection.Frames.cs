using System.Net.Quic.Managed.Ids;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Core;

internal sealed partial class Connection
{
    /// <summary>Most ACK ranges we apply from one frame; older ranges beyond it are ignored (their packets just stay unacknowledged).</summary>
    private const int MaxAckRangesProcessed = 64;

    /// <summary>Bound on PATH_RESPONSE frames owed at once (RFC 9000 §9.3.3 lets us drop extra challenges).</summary>
    private const int MaxPendingPathResponses = 4;

    private TransportErrorCode ProcessFrames(PacketSpaceState space, PacketType packetType, ReadOnlySpan<byte> payload, long nowUs,
        out bool ackEliciting, out ulong frameType, out string? reason)
    {
        var handler = new FrameHandler(this, space, packetType, nowUs);
        TransportErrorCode error = FrameReader.Read(payload, ref handler, out FrameType type, out _);
        ackEliciting = handler.AckEliciting;
        frameType = (ulong)type;
        reason = error == TransportErrorCode.NoError ? null : handler.Reason ?? $"invalid {type} frame";
        return error;
    }

    /// <summary>
    /// The connection's side of <see cref="FrameReader"/>: applies each frame of one received packet. A
    /// CONNECTION_CLOSE (or our own close) does not end the packet: the frames around it were sent before the close, and
    /// an ACK there may be the one that completes a stream the peer read to its end (RFC 9000 §12.4 allows ACK with
    /// CONNECTION_CLOSE). Nothing is sent in answer while closing or draining.
    /// </summary>
    private struct FrameHandler : IFrameHandler
    {
        private readonly Connection _c;
        private readonly PacketSpaceState _space;
        private readonly PacketType _packetType;
        private readonly long _nowUs;

        public FrameHandler(Connection connection, PacketSpaceState space, PacketType packetType, long nowUs)
        {
            _c = connection;
            _space = space;
            _packetType = packetType;
            _nowUs = nowUs;
        }

        /// <summary>Whether any frame read so far is ack-eliciting (RFC 9002 §2).</summary>
        public bool AckEliciting { get; private set; }

        /// <summary>Why the frame that failed was refused; null where the frame type names it well enough.</summary>
        public string? Reason { get; private set; }

        public TransportErrorCode OnFrameType(FrameType type, TransportErrorCode typeError, int offset)
        {
            _c._trace.FrameTypes?.Add((ulong)type);
            if (typeError != TransportErrorCode.NoError) return Fail(typeError, "unknown or malformed frame type");
            // RFC 9000 §12.4 Table 3.
            if (!FrameTypes.IsAllowedIn(type, _packetType)) return Fail(TransportErrorCode.ProtocolViolation, $"frame {type} not allowed in {_packetType} packets");
            AckEliciting |= FrameTypes.IsAckEliciting(type);
            // RFC 9221 §3: DATAGRAM without our max_datagram_frame_size is a PROTOCOL_VIOLATION, however it is encoded.
            if (type is FrameType.Datagram or FrameType.DatagramWithLength && _c._options.MaxDatagramFrameSize == 0)
            {
                return Fail(TransportErrorCode.ProtocolViolation, "DATAGRAM frame without max_datagram_frame_size");
            }
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnPadding(int length) => TransportErrorCode.NoError;

        public TransportErrorCode OnPing() => TransportErrorCode.NoError;

        public TransportErrorCode OnAck(in AckFrame frame) => Done(_c.ProcessAck(_space, frame, _nowUs, out string? reason), reason);

        public TransportErrorCode OnCrypto(in CryptoFrame frame) =>
            Done(_c.ProcessCrypto(_space, (long)frame.Offset, frame.Data, _nowUs, out string? reason), reason);

        public TransportErrorCode OnStream(in StreamFrame frame)
        {
            TransportErrorCode error = _c._streams.OnStreamFrame((long)frame.StreamId, (long)frame.Offset, frame.Data, frame.Fin, out string? reason);
            if (error == TransportErrorCode.NoError) _c.OnStreamDataArrived((long)frame.StreamId);
            return Done(error, reason);
        }

        public TransportErrorCode OnResetStream(in ResetStreamFrame frame)
        {
            TransportErrorCode error = _c._streams.OnResetStreamFrame((long)frame.StreamId, frame.ApplicationErrorCode, (long)frame.FinalSize, out string? reason);
            if (error == TransportErrorCode.NoError) _c.OnStreamDataArrived((long)frame.StreamId);
            return Done(error, reason);
        }

        public TransportErrorCode OnStopSending(in StopSendingFrame frame)
        {
            TransportErrorCode error = _c._streams.OnStopSendingFrame((long)frame.StreamId, frame.ApplicationErrorCode, out string? reason);
            if (error == TransportErrorCode.NoError) _c.OnStreamSendSideChanged((long)frame.StreamId);
            return Done(error, reason);
        }

        public TransportErrorCode OnNewToken(in NewTokenFrame frame)
        {
            if (_c.IsServer) return Fail(TransportErrorCode.ProtocolViolation, "NEW_TOKEN sent by a client"); // §19.7
            if (frame.Token.IsEmpty) return TransportErrorCode.FrameEncodingError;
            _c.ReceivedToken = frame.Token.ToArray();
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnMaxData(in MaxDataFrame frame)
        {
            if (_c._streams.OnMaxDataFrame(ToLong(frame.MaximumData)))
            {
                _c.RefreshAllSendable();
                _c.AfterSendBudgetFreed(); // the budget's room follows the connection's credit too
            }
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnMaxStreamData(in MaxStreamDataFrame frame)
        {
            TransportErrorCode error = _c._streams.OnMaxStreamDataFrame((long)frame.StreamId, ToLong(frame.MaximumStreamData), out string? reason);
            if (error == TransportErrorCode.NoError) _c.OnStreamSendSideChanged((long)frame.StreamId);
            return Done(error, reason);
        }

        public TransportErrorCode OnMaxStreams(in MaxStreamsFrame frame)
        {
            StreamTable streams = _c._streams;
            bool uni = !frame.Bidirectional;
            long before = uni ? streams.LocalUniLimit.MaxStreams : streams.LocalBidiLimit.MaxStreams;
            TransportErrorCode error = streams.OnMaxStreamsFrame(uni, ToLong(frame.MaximumStreams), out string? reason);
            long after = uni ? streams.LocalUniLimit.MaxStreams : streams.LocalBidiLimit.MaxStreams;
            if (error == TransportErrorCode.NoError && after > before) _c.Emit(ConnectionEventKind.StreamsAvailable);
            return Done(error, reason);
        }

        public TransportErrorCode OnDataBlocked(in DataBlockedFrame frame)
        {
            _c._streams.OnDataBlockedFrame(ToLong(frame.MaximumData));
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnStreamDataBlocked(in StreamDataBlockedFrame frame) =>
            Done(_c._streams.OnStreamDataBlockedFrame((long)frame.StreamId, ToLong(frame.MaximumStreamData), out string? reason), reason);

        public TransportErrorCode OnStreamsBlocked(in StreamsBlockedFrame frame) =>
            Done(_c._streams.OnStreamsBlockedFrame(!frame.Bidirectional, ToLong(frame.MaximumStreams), out string? reason), reason);

        public TransportErrorCode OnNewConnectionId(in NewConnectionIdFrame frame) =>
            Done(_c._peerIds.OnNewConnectionId(frame.SequenceNumber, frame.RetirePriorTo, new ConnectionId(frame.ConnectionId),
                new StatelessResetToken(frame.StatelessResetToken), out string? reason), reason);

        public TransportErrorCode OnRetireConnectionId(in RetireConnectionIdFrame frame)
        {
            TransportErrorCode error = _c._localIds.OnRetire(frame.SequenceNumber, _c._currentPacketDestination);
            return error == TransportErrorCode.NoError ? error : Fail(error, "RETIRE_CONNECTION_ID for an ID not issued, or for the one in use");
        }

        public TransportErrorCode OnPathChallenge(in PathChallengeFrame frame)
        {
            if (_c._path.Responses.Count < MaxPendingPathResponses) _c._path.Responses.Enqueue(frame.Data);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnPathResponse(in PathResponseFrame frame)
        {
            _c.OnPathResponse(frame.Data, _nowUs);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnConnectionClose(in ConnectionCloseFrame frame)
        {
            string? text = frame.ReasonPhrase.IsEmpty ? null : System.Text.Encoding.UTF8.GetString(frame.ReasonPhrase);
            ConnectionError peerError = frame.IsApplicationError
                ? ConnectionError.Application(frame.ErrorCode, text, byPeer: true)
                : new ConnectionError(ConnectionErrorSource.Transport, frame.ErrorCode, true, text, frame.TriggeringFrameType);
            _c.EnterDraining(peerError, _nowUs);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnHandshakeDone()
        {
            if (_c.IsServer) return Fail(TransportErrorCode.ProtocolViolation, "HANDSHAKE_DONE sent by a client"); // §19.20
            _c.OnHandshakeConfirmed(_nowUs);
            return TransportErrorCode.NoError;
        }

        public TransportErrorCode OnDatagram(in DatagramFrame frame) => Done(_c.ProcessDatagramFrame(frame, out string? reason), reason);

        private TransportErrorCode Done(TransportErrorCode error, string? reason)
        {
            if (error != TransportErrorCode.NoError) Reason = reason;
            return error;
        }

        private TransportErrorCode Fail(TransportErrorCode error, string reason)
        {
            Reason = reason;
            return error;
        }
    }

    private static TransportErrorCode Violation(string text, out string? reason)
    {
        reason = text;
        return TransportErrorCode.ProtocolViolation;
    }

    private TransportErrorCode ProcessAck(PacketSpaceState space, in AckFrame ack, long nowUs, out string? reason)
    {
        reason = null;
        Span<AckRange> ranges = stackalloc AckRange[MaxAckRangesProcessed];
        ranges = ranges[..ack.CopyRangesTo(ranges)];

        int exponent = space.Space == PacketNumberSpace.ApplicationData ? _peerAckDelayExponent : (int)TransportParameters.DefaultAckDelayExponent;
        long ackDelayUs = ack.AckDelay >= (1UL << (62 - exponent)) ? long.MaxValue / 2 : (long)(ack.AckDelay << exponent);
        long priorInFlight = _recovery.CongestionController.BytesInFlight;
        var sink = new ConnectionSentPacketSink(this);
        _path.AckedEcnMarked = 0;
        AckProcessingResult result = _recovery.OnAckReceived(space.Space, ranges, ackDelayUs, null, nowUs, ref sink);
        if (result.IsError)
        {
            reason = result.Reason;
            return result.Error;
        }
        OnAckEcn(space.Space, ack.EcnCounts, result, nowUs);
        AfterSendBudgetFreed();
        if (result.NewlyAckedCount > 0 && _recovery.CongestionController.BytesInFlight < priorInFlight) _path.PacingBlockedUntilUs = long.MaxValue;
        return TransportErrorCode.NoError;
    }

    private TransportErrorCode ProcessCrypto(PacketSpaceState space, long offset, ReadOnlySpan<byte> data, long nowUs, out string? reason)
    {
        reason = null;
        ReceiveBuffer buffer = space.CryptoReceive;
        // RFC 9000 §7.5: data beyond what we are willing to buffer is CRYPTO_BUFFER_EXCEEDED.
        if (offset + data.Length > buffer.ReadOffset + PacketSpaceState.CryptoBufferLimit)
        {
            reason = "too much out-of-order CRYPTO data";
            return TransportErrorCode.CryptoBufferExceeded;
        }
        if (IsServer && space.Space == PacketNumberSpace.Initial && !data.IsEmpty && offset + data.Length <= buffer.ReadOffset) OnDuplicateClientInitialCrypto();
        buffer.RaiseLimit(buffer.ReadOffset + PacketSpaceState.CryptoBufferLimit);
        TransportErrorCode error = buffer.Insert(offset, data, fin: false, out reason);
        if (error != TransportErrorCode.NoError) return error;

        EncryptionLevel level = space.Space switch
        {
            PacketNumberSpace.Initial => EncryptionLevel.Initial,
            PacketNumberSpace.Handshake => EncryptionLevel.Handshake,
            _ => EncryptionLevel.OneRtt,
        };
        if (buffer.ReadableBytes == 0) return TransportErrorCode.NoError;
        // On the stack, not a 4 KiB array per connection: CRYPTO data is read a few times per connection (TLS copies
        // what it keeps of a partial message).
        Span<byte> chunk = stackalloc byte[4096];
        while (buffer.ReadableBytes > 0)
        {
            int n = buffer.Read(chunk);
            _tlsFed = true;
            error = _tls.Process(level, chunk[..n], nowUs, out reason);
            if (error != TransportErrorCode.NoError) return error;
        }
        return TransportErrorCode.NoError;
    }

    /// <summary>
    /// RFC 9002 §6.2.3: a client repeating CRYPTO data the server already has did not get the server's flight (or its
    /// RTT estimate is too small). The server may then resend its unacknowledged Initial and Handshake CRYPTO data at
    /// once instead of at its next, backed-off PTO, "for a limited number of times per connection"; still within the
    /// anti-amplification limit, which the send path enforces.
    /// </summary>
    private void OnDuplicateClientInitialCrypto()
    {
        if (_earlyData.CryptoRetransmissions >= MaxEarlyCryptoRetransmissions) return;
        bool any = false;
        for (PacketNumberSpace id = PacketNumberSpace.Initial; id <= PacketNumberSpace.Handshake; id++)
        {
            PacketSpaceState s = Space(id);
            if (s.Discarded || !s.CanSend || !RequeueUnackedCrypto(s)) continue;
            s.ProbesPending = Math.Max(s.ProbesPending, 1);
            any = true;
        }
        if (any) _earlyData.CryptoRetransmissions++;
    }

    /// <summary>Early CRYPTO retransmissions (§6.2.3) allowed per connection: once is enough for one loss, a few for bursts.</summary>
    private const int MaxEarlyCryptoRetransmissions = 3;

    /// <summary>A client keeps a NEW_TOKEN token for its next connection to the same server (RFC 9000 §8.1.3).</summary>
    public byte[]? ReceivedToken { get; private set; }

    private void OnStreamDataArrived(long streamId)
    {
        AcceptIncomingStreams();
        Emit(ConnectionEventKind.StreamReadable, streamId);
    }

    private void OnStreamSendSideChanged(long streamId)
    {
        AcceptIncomingStreams();
        if (_streams.TryGetStream(streamId, out TransportStream? stream)) _streams.RefreshSendable(stream);
        Emit(ConnectionEventKind.StreamWritable, streamId);
    }

    private void RefreshAllSendable()
    {
        foreach (TransportStream stream in _streams.Streams)
        {
            if (stream.Send is not null && _streams.RefreshSendable(stream)) Emit(ConnectionEventKind.StreamWritable, stream.Id);
        }
    }
}
