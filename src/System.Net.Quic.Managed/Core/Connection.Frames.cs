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
        ackEliciting = false;
        reason = null;
        frameType = 0;
        var reader = new QuicReader(payload);
        while (!reader.IsEmpty)
        {
            TransportErrorCode error = FrameTypes.TryRead(ref reader, out FrameType type);
            frameType = (ulong)type;
            _trace.FrameTypes?.Add(frameType);
            if (error != TransportErrorCode.NoError)
            {
                reason = "unknown or malformed frame type";
                return error;
            }
            error = FrameTypes.CheckAllowedIn(type, packetType);
            if (error != TransportErrorCode.NoError)
            {
                reason = $"frame {type} not allowed in {packetType} packets";
                return error;
            }
            ackEliciting |= FrameTypes.IsAckEliciting(type);
            error = ProcessFrame(space, type, ref reader, nowUs, out reason);
            if (error != TransportErrorCode.NoError)
            {
                reason ??= $"invalid {type} frame";
                return error;
            }
            // A CONNECTION_CLOSE (or our own close) does not end the packet: the frames around it were sent before the
            // close, and an ACK there may be the one that completes a stream the peer read to its end (RFC 9000 §12.4
            // allows ACK with CONNECTION_CLOSE). Nothing is sent in answer while closing or draining.
        }
        return TransportErrorCode.NoError;
    }

    private TransportErrorCode ProcessFrame(PacketSpaceState space, FrameType type, ref QuicReader reader, long nowUs, out string? reason)
    {
        reason = null;
        TransportErrorCode error;
        if (FrameTypes.IsStream(type))
        {
            error = StreamFrame.TryRead(ref reader, type, out StreamFrame stream);
            if (error != TransportErrorCode.NoError) return error;
            error = _streams.OnStreamFrame((long)stream.StreamId, (long)stream.Offset, stream.Data, stream.Fin, out reason);
            if (error == TransportErrorCode.NoError) OnStreamDataArrived((long)stream.StreamId);
            return error;
        }

        switch (type)
        {
            case FrameType.Padding:
                PaddingFrame.SkipRun(ref reader);
                return TransportErrorCode.NoError;
            case FrameType.Ping:
                return TransportErrorCode.NoError;
            case FrameType.Ack:
            case FrameType.AckEcn:
                return ProcessAck(space, type, ref reader, nowUs, out reason);
            case FrameType.Crypto:
            {
                error = CryptoFrame.TryRead(ref reader, out CryptoFrame crypto);
                return error != TransportErrorCode.NoError ? error : ProcessCrypto(space, (long)crypto.Offset, crypto.Data, nowUs, out reason);
            }
            case FrameType.ResetStream:
            {
                error = ResetStreamFrame.TryRead(ref reader, out ResetStreamFrame f);
                if (error != TransportErrorCode.NoError) return error;
                error = _streams.OnResetStreamFrame((long)f.StreamId, f.ApplicationErrorCode, (long)f.FinalSize, out reason);
                if (error == TransportErrorCode.NoError) OnStreamDataArrived((long)f.StreamId);
                return error;
            }
            case FrameType.StopSending:
            {
                error = StopSendingFrame.TryRead(ref reader, out StopSendingFrame f);
                if (error != TransportErrorCode.NoError) return error;
                error = _streams.OnStopSendingFrame((long)f.StreamId, f.ApplicationErrorCode, out reason);
                if (error == TransportErrorCode.NoError) OnStreamSendSideChanged((long)f.StreamId);
                return error;
            }
            case FrameType.NewToken:
            {
                error = NewTokenFrame.TryRead(ref reader, out NewTokenFrame f);
                if (error != TransportErrorCode.NoError) return error;
                if (IsServer) return Violation("NEW_TOKEN sent by a client", out reason); // §19.7
                if (f.Token.IsEmpty) return TransportErrorCode.FrameEncodingError;
                ReceivedToken = f.Token.ToArray();
                return TransportErrorCode.NoError;
            }
            case FrameType.MaxData:
            {
                error = MaxDataFrame.TryRead(ref reader, out MaxDataFrame f);
                if (error != TransportErrorCode.NoError) return error;
                if (_streams.OnMaxDataFrame(ToLong(f.MaximumData))) RefreshAllSendable();
                return TransportErrorCode.NoError;
            }
            case FrameType.MaxStreamData:
            {
                error = MaxStreamDataFrame.TryRead(ref reader, out MaxStreamDataFrame f);
                if (error != TransportErrorCode.NoError) return error;
                error = _streams.OnMaxStreamDataFrame((long)f.StreamId, ToLong(f.MaximumStreamData), out reason);
                if (error == TransportErrorCode.NoError) OnStreamSendSideChanged((long)f.StreamId);
                return error;
            }
            case FrameType.MaxStreamsBidirectional:
            case FrameType.MaxStreamsUnidirectional:
            {
                error = MaxStreamsFrame.TryRead(ref reader, type, out MaxStreamsFrame f);
                if (error != TransportErrorCode.NoError) return error;
                bool uni = !f.Bidirectional;
                long before = uni ? _streams.LocalUniLimit.MaxStreams : _streams.LocalBidiLimit.MaxStreams;
                error = _streams.OnMaxStreamsFrame(uni, ToLong(f.MaximumStreams), out reason);
                long after = uni ? _streams.LocalUniLimit.MaxStreams : _streams.LocalBidiLimit.MaxStreams;
                if (error == TransportErrorCode.NoError && after > before) Emit(ConnectionEventKind.StreamsAvailable);
                return error;
            }
            case FrameType.DataBlocked:
            {
                error = DataBlockedFrame.TryRead(ref reader, out DataBlockedFrame f);
                if (error == TransportErrorCode.NoError) _streams.OnDataBlockedFrame(ToLong(f.MaximumData));
                return error;
            }
            case FrameType.StreamDataBlocked:
            {
                error = StreamDataBlockedFrame.TryRead(ref reader, out StreamDataBlockedFrame f);
                return error != TransportErrorCode.NoError ? error
                    : _streams.OnStreamDataBlockedFrame((long)f.StreamId, ToLong(f.MaximumStreamData), out reason);
            }
            case FrameType.StreamsBlockedBidirectional:
            case FrameType.StreamsBlockedUnidirectional:
            {
                error = StreamsBlockedFrame.TryRead(ref reader, type, out StreamsBlockedFrame f);
                return error != TransportErrorCode.NoError ? error
                    : _streams.OnStreamsBlockedFrame(!f.Bidirectional, ToLong(f.MaximumStreams), out reason);
            }
            case FrameType.NewConnectionId:
            {
                error = NewConnectionIdFrame.TryRead(ref reader, out NewConnectionIdFrame f);
                if (error != TransportErrorCode.NoError) return error;
                return _peerIds.OnNewConnectionId(f.SequenceNumber, f.RetirePriorTo, new ConnectionId(f.ConnectionId),
                    new StatelessResetToken(f.StatelessResetToken), out reason);
            }
            case FrameType.RetireConnectionId:
            {
                error = RetireConnectionIdFrame.TryRead(ref reader, out RetireConnectionIdFrame f);
                if (error != TransportErrorCode.NoError) return error;
                error = _localIds.OnRetire(f.SequenceNumber, _currentPacketDestination);
                if (error != TransportErrorCode.NoError) reason = "RETIRE_CONNECTION_ID for an ID not issued, or for the one in use";
                return error;
            }
            case FrameType.PathChallenge:
            {
                error = PathChallengeFrame.TryRead(ref reader, out PathChallengeFrame f);
                if (error != TransportErrorCode.NoError) return error;
                if (_path.Responses.Count < MaxPendingPathResponses) _path.Responses.Enqueue(f.Data);
                return TransportErrorCode.NoError;
            }
            case FrameType.PathResponse:
            {
                error = PathResponseFrame.TryRead(ref reader, out PathResponseFrame f);
                if (error != TransportErrorCode.NoError) return error;
                OnPathResponse(f.Data, nowUs);
                return TransportErrorCode.NoError;
            }
            case FrameType.ConnectionClose:
            case FrameType.ConnectionCloseApplication:
            {
                error = ConnectionCloseFrame.TryRead(ref reader, type, out ConnectionCloseFrame f);
                if (error != TransportErrorCode.NoError) return error;
                string? text = f.ReasonPhrase.IsEmpty ? null : System.Text.Encoding.UTF8.GetString(f.ReasonPhrase);
                ConnectionError peerError = f.IsApplicationError
                    ? ConnectionError.Application(f.ErrorCode, text, byPeer: true)
                    : new ConnectionError(ConnectionErrorSource.Transport, f.ErrorCode, true, text, f.TriggeringFrameType);
                EnterDraining(peerError, nowUs);
                return TransportErrorCode.NoError;
            }
            case FrameType.HandshakeDone:
                if (IsServer) return Violation("HANDSHAKE_DONE sent by a client", out reason); // §19.20
                OnHandshakeConfirmed(nowUs);
                return TransportErrorCode.NoError;
            case FrameType.Datagram:
            case FrameType.DatagramWithLength:
                return ProcessDatagramFrame(type, ref reader, out reason);
            default:
                reason = "unknown frame type";
                return TransportErrorCode.FrameEncodingError;
        }
    }

    private static TransportErrorCode Violation(string text, out string? reason)
    {
        reason = text;
        return TransportErrorCode.ProtocolViolation;
    }

    private TransportErrorCode ProcessAck(PacketSpaceState space, FrameType type, ref QuicReader reader, long nowUs, out string? reason)
    {
        reason = null;
        TransportErrorCode error = AckFrame.TryRead(ref reader, type, out AckFrame ack);
        if (error != TransportErrorCode.NoError) return error;
        Span<Wire.AckRange> wireRanges = stackalloc Wire.AckRange[MaxAckRangesProcessed];
        int count = ack.CopyRangesTo(wireRanges);
        Span<Recovery.AckRange> ranges = stackalloc Recovery.AckRange[count];
        for (int i = 0; i < count; i++) ranges[i] = new Recovery.AckRange((long)wireRanges[i].Smallest, (long)wireRanges[i].Largest);

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
