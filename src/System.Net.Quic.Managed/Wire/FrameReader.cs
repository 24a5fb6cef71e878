namespace System.Net.Quic.Managed.Wire;

/// <summary>
/// Reads a packet payload frame by frame and hands each decoded frame to a handler: the one place that maps a frame
/// type to its decoder. It allocates nothing; frames that carry bytes (STREAM, CRYPTO, DATAGRAM, ...) point into the
/// payload. A frame that fails to decode is a FRAME_ENCODING_ERROR (RFC 9000 §12.4) and ends the payload, as frames
/// carry no length of their own.
/// </summary>
internal static class FrameReader
{
    /// <summary>
    /// Reads every frame of <paramref name="payload"/> into <paramref name="handler"/>. Returns NoError when the payload
    /// was read to its end, else the error that stopped it: a decoding error or what a handler method returned.
    /// <paramref name="type"/> and <paramref name="offset"/> name the last frame reached (the one that failed, on error).
    /// </summary>
    public static TransportErrorCode Read<THandler>(ReadOnlySpan<byte> payload, ref THandler handler, out FrameType type, out int offset)
        where THandler : struct, IFrameHandler, allows ref struct
    {
        var reader = new QuicReader(payload);
        type = default;
        offset = 0;
        while (!reader.IsEmpty)
        {
            offset = reader.Position;
            TransportErrorCode typeError = FrameTypes.TryRead(ref reader, out type);
            TransportErrorCode error = handler.OnFrameType(type, typeError, offset);
            if (error != TransportErrorCode.NoError) return error;
            if (typeError == TransportErrorCode.FrameEncodingError) return typeError;
            error = ReadFrame(ref reader, type, ref handler);
            if (error != TransportErrorCode.NoError) return error;
        }

        return TransportErrorCode.NoError;
    }

    private static TransportErrorCode ReadFrame<THandler>(scoped ref QuicReader reader, FrameType type, ref THandler handler)
        where THandler : struct, IFrameHandler, allows ref struct
    {
        TransportErrorCode error;
        switch (type)
        {
            case FrameType.Padding:
                return handler.OnPadding(PaddingFrame.SkipRun(ref reader));
            case FrameType.Ping:
                return handler.OnPing();
            case FrameType.Ack:
            case FrameType.AckEcn:
            {
                error = AckFrame.TryRead(ref reader, type, out AckFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnAck(f);
            }
            case FrameType.ResetStream:
            {
                error = ResetStreamFrame.TryRead(ref reader, out ResetStreamFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnResetStream(f);
            }
            case FrameType.StopSending:
            {
                error = StopSendingFrame.TryRead(ref reader, out StopSendingFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnStopSending(f);
            }
            case FrameType.Crypto:
            {
                error = CryptoFrame.TryRead(ref reader, out CryptoFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnCrypto(f);
            }
            case FrameType.NewToken:
            {
                error = NewTokenFrame.TryRead(ref reader, out NewTokenFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnNewToken(f);
            }
            case >= FrameType.Stream and <= FrameType.StreamMax:
            {
                error = StreamFrame.TryRead(ref reader, type, out StreamFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnStream(f);
            }
            case FrameType.MaxData:
            {
                error = MaxDataFrame.TryRead(ref reader, out MaxDataFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnMaxData(f);
            }
            case FrameType.MaxStreamData:
            {
                error = MaxStreamDataFrame.TryRead(ref reader, out MaxStreamDataFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnMaxStreamData(f);
            }
            case FrameType.MaxStreamsBidirectional:
            case FrameType.MaxStreamsUnidirectional:
            {
                error = MaxStreamsFrame.TryRead(ref reader, type, out MaxStreamsFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnMaxStreams(f);
            }
            case FrameType.DataBlocked:
            {
                error = DataBlockedFrame.TryRead(ref reader, out DataBlockedFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnDataBlocked(f);
            }
            case FrameType.StreamDataBlocked:
            {
                error = StreamDataBlockedFrame.TryRead(ref reader, out StreamDataBlockedFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnStreamDataBlocked(f);
            }
            case FrameType.StreamsBlockedBidirectional:
            case FrameType.StreamsBlockedUnidirectional:
            {
                error = StreamsBlockedFrame.TryRead(ref reader, type, out StreamsBlockedFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnStreamsBlocked(f);
            }
            case FrameType.NewConnectionId:
            {
                error = NewConnectionIdFrame.TryRead(ref reader, out NewConnectionIdFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnNewConnectionId(f);
            }
            case FrameType.RetireConnectionId:
            {
                error = RetireConnectionIdFrame.TryRead(ref reader, out RetireConnectionIdFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnRetireConnectionId(f);
            }
            case FrameType.PathChallenge:
            {
                error = PathChallengeFrame.TryRead(ref reader, out PathChallengeFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnPathChallenge(f);
            }
            case FrameType.PathResponse:
            {
                error = PathResponseFrame.TryRead(ref reader, out PathResponseFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnPathResponse(f);
            }
            case FrameType.ConnectionClose:
            case FrameType.ConnectionCloseApplication:
            {
                error = ConnectionCloseFrame.TryRead(ref reader, type, out ConnectionCloseFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnConnectionClose(f);
            }
            case FrameType.HandshakeDone:
                return handler.OnHandshakeDone();
            case FrameType.Datagram:
            case FrameType.DatagramWithLength:
            {
                error = DatagramFrame.TryRead(ref reader, type, out DatagramFrame f);
                return error != TransportErrorCode.NoError ? error : handler.OnDatagram(f);
            }
            default:
                // FrameTypes.TryRead reports every type it does not know; a type it knows and this switch does not is a
                // frame added to FrameType without a case here.
                return TransportErrorCode.FrameEncodingError;
        }
    }
}
