using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Http3;

/// <summary>
/// Connection-level HTTP/3 state shared by client and server: the local control and QPACK streams, the peer's
/// unidirectional streams (RFC 9114 §6.2, RFC 9204 §4.2), the peer's SETTINGS and GOAWAY, and connection errors.
/// </summary>
internal sealed class Http3Session
{
    // Caps on frames buffered whole. SETTINGS and single-integer frames are tiny by nature.
    private const int MaxSettingsPayload = 4096;
    private const int MaxSingleIntegerPayload = 8;

    private readonly IMultiplexedConnection _connection;
    private readonly bool _isServer;
    private readonly TaskCompletionSource<Http3Settings> _peerSettings = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<IMultiplexedStream> _localUnidirectionalStreams = new();
    private int _peerControlStreamSeen;
    private int _peerEncoderStreamSeen;
    private int _peerDecoderStreamSeen;
    private Http3ProtocolException? _failure;

    public Http3Session(IMultiplexedConnection connection, bool isServer, Http3Settings localSettings)
    {
        _connection = connection;
        _isServer = isServer;
        LocalSettings = localSettings;
    }

    public IMultiplexedConnection Connection => _connection;

    public Http3Settings LocalSettings { get; }

    public Task<Http3Settings> PeerSettings => _peerSettings.Task;

    /// <summary>The last GOAWAY identifier received, or -1.</summary>
    public long PeerGoawayId { get; private set; } = -1;

    /// <summary>The first connection error this endpoint detected, if any.</summary>
    public Http3ProtocolException? Failure => _failure;

    /// <summary>Opens the control stream (with SETTINGS first, RFC 9114 §6.2.1) and the QPACK encoder and decoder streams.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        IMultiplexedStream control = await _connection.OpenStreamAsync(false, cancellationToken).ConfigureAwait(false);
        byte[] settings = LocalSettings.EncodeFrame();
        byte[] first = new byte[1 + settings.Length];
        first[0] = (byte)Http3StreamType.Control;
        settings.CopyTo(first, 1);
        await control.Stream.WriteAsync(first, cancellationToken).ConfigureAwait(false);
        await control.Stream.FlushAsync(cancellationToken).ConfigureAwait(false);
        _localUnidirectionalStreams.Add(control);

        // RFC 9204 §4.2: both QPACK streams are opened even though a 0-capacity table sends no instructions.
        foreach (long type in new[] { Http3StreamType.QpackEncoder, Http3StreamType.QpackDecoder })
        {
            IMultiplexedStream stream = await _connection.OpenStreamAsync(false, cancellationToken).ConfigureAwait(false);
            await stream.Stream.WriteAsync(new[] { (byte)type }, cancellationToken).ConfigureAwait(false);
            await stream.Stream.FlushAsync(cancellationToken).ConfigureAwait(false);
            _localUnidirectionalStreams.Add(stream);
        }
    }

    /// <summary>
    /// Accepts peer streams until the connection closes. Bidirectional streams go to <paramref name="onRequestStream"/>
    /// (server); on a client a server-initiated bidirectional stream is H3_STREAM_CREATION_ERROR (RFC 9114 §6.1).
    /// </summary>
    public async Task RunAcceptLoopAsync(Func<IMultiplexedStream, Task>? onRequestStream, CancellationToken cancellationToken)
    {
        List<Task> running = new();
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                IMultiplexedStream? stream = await _connection.AcceptStreamAsync(cancellationToken).ConfigureAwait(false);
                if (stream is null)
                {
                    break;
                }

                if (stream.IsBidirectional)
                {
                    if (onRequestStream is null)
                    {
                        await FailAsync(new Http3ProtocolException(Http3ErrorCode.StreamCreationError, "server opened a bidirectional stream")).ConfigureAwait(false);
                        break;
                    }

                    running.Add(onRequestStream(stream));
                }
                else
                {
                    running.Add(HandleUnidirectionalStreamAsync(stream, cancellationToken));
                }

                running.RemoveAll(static t => t.IsCompleted);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }

        try
        {
            await Task.WhenAll(running).ConfigureAwait(false);
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested || _failure is not null)
        {
        }
    }

    public async Task HandleUnidirectionalStreamAsync(IMultiplexedStream stream, CancellationToken cancellationToken)
    {
        await using (stream.ConfigureAwait(false))
        {
            try
            {
                Http3FrameReader reader = new(stream.Stream);
                long? type = await reader.ReadStreamTypeAsync(cancellationToken).ConfigureAwait(false);
                switch (type)
                {
                    case null:
                        return;
                    case Http3StreamType.Control:
                        EnsureFirst(ref _peerControlStreamSeen, "control");
                        await ReadControlStreamAsync(reader, cancellationToken).ConfigureAwait(false);
                        break;
                    case Http3StreamType.QpackEncoder:
                        EnsureFirst(ref _peerEncoderStreamSeen, "QPACK encoder");
                        await ReadQpackStreamAsync(reader, encoderStream: true, cancellationToken).ConfigureAwait(false);
                        break;
                    case Http3StreamType.QpackDecoder:
                        EnsureFirst(ref _peerDecoderStreamSeen, "QPACK decoder");
                        await ReadQpackStreamAsync(reader, encoderStream: false, cancellationToken).ConfigureAwait(false);
                        break;
                    case Http3StreamType.Push:
                        // RFC 9114 §4.6: a client never sent MAX_PUSH_ID, so any push is H3_ID_ERROR; a server never accepts push streams.
                        throw new Http3ProtocolException(
                            _isServer ? Http3ErrorCode.StreamCreationError : Http3ErrorCode.IdError,
                            "push stream received but push is not enabled");
                    default:
                        // RFC 9114 §6.2: unknown and greased stream types are ignored; stop reading them.
                        stream.Abort((long)Http3ErrorCode.StreamCreationError);
                        break;
                }
            }
            catch (Http3ProtocolException e)
            {
                await FailAsync(e).ConfigureAwait(false);
            }
            catch (Exception) when (cancellationToken.IsCancellationRequested)
            {
            }
            catch (IOException)
            {
                // The transport tore the stream down (connection closing); nothing to report at this layer.
            }
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

                    _peerSettings.TrySetResult(settings);
                    break;
                case Http3FrameType.Goaway:
                    long id = await ReadSingleIntegerAsync(reader, cancellationToken).ConfigureAwait(false);
                    // RFC 9114 §5.2: from a server the id is a client-initiated bidirectional stream id; it never increases.
                    if (!_isServer && id % 4 != 0)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.IdError, "GOAWAY does not carry a client-initiated bidirectional stream id");
                    }

                    if (PeerGoawayId >= 0 && id > PeerGoawayId)
                    {
                        throw new Http3ProtocolException(Http3ErrorCode.IdError, "GOAWAY id increased");
                    }

                    PeerGoawayId = id;
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
    private static async Task ReadQpackStreamAsync(Http3FrameReader reader, bool encoderStream, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[256];
        int buffered = 0;
        while (true)
        {
            int n = await reader.ReadRawAsync(buffer.AsMemory(buffered), cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                // RFC 9204 §4.2: closing either QPACK stream is H3_CLOSED_CRITICAL_STREAM.
                throw new Http3ProtocolException(Http3ErrorCode.ClosedCriticalStream, "peer closed a QPACK stream");
            }

            buffered += n;
            int consumed = ConsumeQpackInstructions(buffer.AsSpan(0, buffered), encoderStream, out Http3ErrorCode error);
            if (error != Http3ErrorCode.NoError)
            {
                throw new Http3ProtocolException(error, encoderStream ? "QPACK encoder instruction for a 0-capacity table" : "unexpected QPACK decoder instruction");
            }

            Buffer.BlockCopy(buffer, consumed, buffer, 0, buffered - consumed);
            buffered -= consumed;
        }
    }

    /// <summary>The library's QPACK encoder/decoder stream check (capacity 0): see <see cref="QpackInstructions.Consume"/>.</summary>
    internal static int ConsumeQpackInstructions(ReadOnlySpan<byte> input, bool encoderStream, out Http3ErrorCode error)
        => QpackInstructions.Consume(input, encoderStream, out error);

    /// <summary>Records the first connection error and closes the connection with its code (RFC 9114 §8).</summary>
    public async Task FailAsync(Http3ProtocolException error)
    {
        if (Interlocked.CompareExchange(ref _failure, error, null) is not null)
        {
            return;
        }

        _peerSettings.TrySetException(error);
        try
        {
            await _connection.CloseAsync((long)error.ErrorCode, CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Closing is best effort; the error is already recorded.
        }
    }

    /// <summary>Graceful shutdown: H3_NO_ERROR.</summary>
    public async Task CloseAsync(CancellationToken cancellationToken)
    {
        foreach (IMultiplexedStream stream in _localUnidirectionalStreams)
        {
            await stream.DisposeAsync().ConfigureAwait(false);
        }

        await _connection.CloseAsync((long)Http3ErrorCode.NoError, cancellationToken).ConfigureAwait(false);
    }
}
