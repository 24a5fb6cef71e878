using QuicManaged.Http.Qpack;

namespace QuicManaged.Http.Framing;

/// <summary>
/// The peer's unidirectional streams of one HTTP/3 connection (RFC 9114 §6.2, RFC 9204 §4.2), for client and server:
/// one control stream (SETTINGS first, then GOAWAY and friends), one QPACK encoder and one decoder stream (encoder
/// instructions applied to our dynamic table when there is a <see cref="QpackDecoderSession"/>, else checked against a
/// 0-capacity table; our encoder never uses the dynamic table, so the peer's decoder may only cancel streams), no push. Violations throw <see cref="Http3ProtocolException"/> with the
/// connection error code; the caller closes the connection with it.
/// </summary>
internal sealed class Http3PeerStreams
{
    private const int MaxSettingsPayload = 4096;
    private const int MaxSingleIntegerPayload = 8;

    private readonly bool _isServer;
    private readonly Action<Http3Settings> _onSettings;
    private readonly Action<long> _onGoaway;
    private readonly QpackDecoderSession? _qpackDecoder;
    private int _controlSeen;
    private int _encoderSeen;
    private int _decoderSeen;
    private long _goawayId = -1;

    public Http3PeerStreams(bool isServer, Action<Http3Settings> onSettings, Action<long> onGoaway, QpackDecoderSession? qpackDecoder = null)
    {
        _qpackDecoder = qpackDecoder;
        _isServer = isServer;
        _onSettings = onSettings;
        _onGoaway = onGoaway;
    }

    /// <summary>The last GOAWAY identifier received, or -1.</summary>
    public long GoawayId => Interlocked.Read(ref _goawayId);

    /// <summary>
    /// Reads a peer unidirectional stream of <paramref name="type"/> until it ends (which for the critical streams is
    /// itself an error). False for an unknown (or grease) type: RFC 9114 §6.2 says to ignore it; the caller stops reading.
    /// </summary>
    public async Task<bool> ReadAsync(Http3FrameReader reader, long type, CancellationToken cancellationToken)
    {
        switch (type)
        {
            case Http3StreamType.Control:
                EnsureFirst(ref _controlSeen, "control");
                await ReadControlStreamAsync(reader, cancellationToken).ConfigureAwait(false);
                return true;
            case Http3StreamType.QpackEncoder:
                EnsureFirst(ref _encoderSeen, "QPACK encoder");
                await ReadQpackStreamAsync(reader, encoderStream: true, cancellationToken).ConfigureAwait(false);
                return true;
            case Http3StreamType.QpackDecoder:
                EnsureFirst(ref _decoderSeen, "QPACK decoder");
                await ReadQpackStreamAsync(reader, encoderStream: false, cancellationToken).ConfigureAwait(false);
                return true;
            case Http3StreamType.Push:
                // RFC 9114 §4.6: a client never sent MAX_PUSH_ID, so any push is H3_ID_ERROR; a server never accepts push streams.
                throw new Http3ProtocolException(
                    _isServer ? Http3ErrorCode.StreamCreationError : Http3ErrorCode.IdError,
                    "push stream received but push is not enabled");
            default:
                return false;
        }
    }

    private static void EnsureFirst(ref int seen, string what)
    {
        // RFC 9114 §6.2.1 and RFC 9204 §4.2: a second stream of these types is H3_STREAM_CREATION_ERROR.
        if (Interlocked.Exchange(ref seen, 1) != 0)
        {
            throw new Http3ProtocolException(Http3ErrorCode.StreamCreationError, $"second {what} stream");
        }
    }

    private async Task ReadControlStreamAsync(Http3FrameReader reader, CancellationToken cancellationToken)
    {
        bool first = true;
        while (true)
        {
            Http3FrameHeader? maybeHeader = await reader.ReadFrameHeaderAsync(cancellationToken).ConfigureAwait(false);
            if (maybeHeader is not Http3FrameHeader header)
            {
                // RFC 9114 §6.2.1: closing the control stream is H3_CLOSED_CRITICAL_STREAM.
                throw new Http3ProtocolException(Http3ErrorCode.ClosedCriticalStream, "peer closed its control stream");
            }

            if (first && header.Type != Http3FrameType.Settings)
            {
                throw new Http3ProtocolException(Http3ErrorCode.MissingSettings, "first control frame is not SETTINGS");
            }

            switch (header.Type)
            {
                case Http3FrameType.Settings:
                    if (!first)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "second SETTINGS frame");
                    }

                    byte[] payload = await reader.ReadWholePayloadAsync(MaxSettingsPayload, Http3ErrorCode.ExcessiveLoad, cancellationToken).ConfigureAwait(false);
                    Http3ErrorCode error = Http3Settings.TryParse(payload, out Http3Settings settings);
                    if (error != Http3ErrorCode.NoError)
                    {
                        throw new Http3ProtocolException(error, "malformed SETTINGS frame");
                    }

                    _onSettings(settings);
                    break;
                case Http3FrameType.Goaway:
                    long id = await ReadSingleIntegerAsync(reader, cancellationToken).ConfigureAwait(false);
                    // RFC 9114 §5.2: from a server the id is a client-initiated bidirectional stream id; it never increases.
                    // Kestrel starts its graceful shutdown with the largest variable-length integer (2^62-1, "every
                    // stream so far"), as SocketsHttpHandler accepts: that one is taken as it is meant.
                    if (!_isServer && id % 4 != 0 && id != VariableLengthInteger.MaxValue)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.IdError, "GOAWAY does not carry a client-initiated bidirectional stream id");
                    }

                    long previous = GoawayId;
                    if (previous >= 0 && id > previous)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.IdError, "GOAWAY id increased");
                    }

                    Interlocked.Exchange(ref _goawayId, id);
                    _onGoaway(id);
                    break;
                case Http3FrameType.MaxPushId:
                    // RFC 9114 §7.2.7: only clients send MAX_PUSH_ID.
                    if (!_isServer)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, "MAX_PUSH_ID received by a client");
                    }

                    await ReadSingleIntegerAsync(reader, cancellationToken).ConfigureAwait(false);
                    break;
                case Http3FrameType.CancelPush:
                    await ReadSingleIntegerAsync(reader, cancellationToken).ConfigureAwait(false);
                    break;
                case Http3FrameType.Data:
                case Http3FrameType.Headers:
                case Http3FrameType.PushPromise:
                    throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"frame type 0x{header.Type:x} on the control stream");
                default:
                    if (Http3FrameType.IsReservedHttp2Type(header.Type))
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.FrameUnexpected, $"reserved HTTP/2 frame type 0x{header.Type:x}");
                    }

                    await reader.SkipPayloadAsync(cancellationToken).ConfigureAwait(false);
                    break;
            }

            first = false;
        }
    }

    private static async Task<long> ReadSingleIntegerAsync(Http3FrameReader reader, CancellationToken cancellationToken)
    {
        byte[] payload = await reader.ReadWholePayloadAsync(MaxSingleIntegerPayload, Http3ErrorCode.FrameError, cancellationToken).ConfigureAwait(false);
        Http3ErrorCode error = Http3FrameCodec.TryReadSingleInteger(payload, out long value);
        if (error != Http3ErrorCode.NoError)
        {
            throw new Http3ProtocolException(error, "frame payload is not exactly one integer");
        }

        return value;
    }

    /// <summary>
    /// With a 0-capacity dynamic table the peer's encoder may only send Set Dynamic Table Capacity 0, and the peer's
    /// decoder has nothing to acknowledge except stream cancellations (RFC 9204 §4.3, §4.4).
    /// </summary>
    private async Task ReadQpackStreamAsync(Http3FrameReader reader, bool encoderStream, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[encoderStream && _qpackDecoder is not null ? 4096 : 256];
        int buffered = 0;
        while (true)
        {
            int n = await reader.ReadRawAsync(buffer.AsMemory(buffered), cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                // RFC 9204 §4.2: closing either QPACK stream is H3_CLOSED_CRITICAL_STREAM.
                throw new Http3ProtocolException(Http3ErrorCode.ClosedCriticalStream, "peer closed a QPACK stream");
            }

            if (encoderStream && _qpackDecoder is not null)
            {
                // RFC 9204 §4.3: instructions are applied as they arrive; partial ones wait inside the session's parser.
                _qpackDecoder.OnEncoderStreamData(buffer.AsSpan(0, n));
                continue;
            }

            buffered += n;
            int consumed = QpackInstructions.Consume(buffer.AsSpan(0, buffered), encoderStream, out Http3ErrorCode error);
            if (error != Http3ErrorCode.NoError)
            {
                throw new Http3ProtocolException(error, encoderStream ? "QPACK encoder instruction for a 0-capacity table" : "unexpected QPACK decoder instruction");
            }

            Buffer.BlockCopy(buffer, consumed, buffer, 0, buffered - consumed);
            buffered -= consumed;
        }
    }
}
