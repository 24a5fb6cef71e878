using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Http3;

/// <summary>
/// Connection-level HTTP/3 state shared by client and server: the local control and QPACK streams, the peer's
/// unidirectional streams (RFC 9114 §6.2, RFC 9204 §4.2), the peer's SETTINGS and GOAWAY, and connection errors.
/// </summary>
internal sealed class Http3Session
{
    private readonly IMultiplexedConnection _connection;
    private readonly TaskCompletionSource<Http3Settings> _peerSettings = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<IMultiplexedStream> _localUnidirectionalStreams = new();
    private readonly Http3PeerStreams _peerStreams;
    private readonly QpackDecoderSession? _qpack;
    private IMultiplexedStream? _decoderStream;
    private int _decoderWriting;
    private Http3ProtocolException? _failure;

    public Http3Session(IMultiplexedConnection connection, bool isServer, Http3Settings localSettings)
    {
        _connection = connection;
        LocalSettings = localSettings;
        if (localSettings.QpackMaxTableCapacity > 0)
        {
            // RFC 9204: we decode with the dynamic table we advertise; the peer's encoder stream fills it.
            _qpack = new QpackDecoderSession(localSettings.QpackMaxTableCapacity, (int)Math.Min(int.MaxValue, localSettings.QpackBlockedStreams));
            _qpack.DecoderInstructionsQueued += OnDecoderInstructionsQueued;
        }

        _peerStreams = new Http3PeerStreams(isServer, settings => _peerSettings.TrySetResult(settings), static _ => { }, _qpack);
    }

    public IMultiplexedConnection Connection => _connection;

    public Http3Settings LocalSettings { get; }

    /// <summary>The QPACK decoding state when <see cref="LocalSettings"/> advertise a dynamic table; null for capacity 0.</summary>
    public QpackDecoderSession? Qpack => _qpack;

    public Task<Http3Settings> PeerSettings => _peerSettings.Task;

    /// <summary>The last GOAWAY identifier received, or -1.</summary>
    public long PeerGoawayId => _peerStreams.GoawayId;

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
            if (type == Http3StreamType.QpackDecoder)
            {
                _decoderStream = stream;
            }
        }

        if (_qpack?.HasDecoderInstructions == true)
        {
            OnDecoderInstructionsQueued();
        }
    }

    /// <summary>Writes queued QPACK decoder-stream instructions in order, one writer at a time.</summary>
    private void OnDecoderInstructionsQueued()
    {
        if (_decoderStream is not null && Interlocked.Exchange(ref _decoderWriting, 1) == 0)
        {
            _ = WriteDecoderInstructionsAsync(_decoderStream);
        }
    }

    private async Task WriteDecoderInstructionsAsync(IMultiplexedStream decoder)
    {
        try
        {
            while (true)
            {
                byte[]? instructions = _qpack!.TakeDecoderInstructions();
                if (instructions is null)
                {
                    Volatile.Write(ref _decoderWriting, 0);
                    if (!_qpack.HasDecoderInstructions || Interlocked.Exchange(ref _decoderWriting, 1) != 0)
                    {
                        return;
                    }

                    continue;
                }

                await decoder.Stream.WriteAsync(instructions).ConfigureAwait(false);
                await decoder.Stream.FlushAsync().ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or OperationCanceledException or InvalidOperationException or System.Net.Quic.Managed.QuicException)
        {
            // The connection is going away.
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
                if (type is long known && !await _peerStreams.ReadAsync(reader, known, cancellationToken).ConfigureAwait(false))
                {
                    // RFC 9114 §6.2: unknown and greased stream types are ignored; stop reading them.
                    stream.Abort((long)Http3ErrorCode.StreamCreationError);
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
        _qpack?.Fail(error);
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
