using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Net.Quic.Managed;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;

namespace QuicManaged.AspNetCore;

/// <summary>
/// One QUIC stream as a Kestrel <see cref="ConnectionContext"/>: a receive loop copies the stream into the input pipe, a
/// send loop copies the output pipe into the stream (FIN when Kestrel completes it) and also ends when the stream's write
/// side does (the peer's STOP_SENDING or the connection's end, even while Kestrel writes nothing). A peer's abort sets the
/// stream's error code and completes Kestrel's output without an exception, as Kestrel's own QUIC transport does: Kestrel
/// then aborts the request (RequestAborted) through the closed notification, quietly. The features are what Kestrel's
/// HTTP/3 reads: stream id and direction, error code, read/write abort, the closed notification, persistent state.
/// </summary>
internal sealed partial class QuicManagedStreamContext : ConnectionContext, IDisposable,
    IStreamDirectionFeature, IStreamIdFeature, IProtocolErrorCodeFeature, IStreamAbortFeature, IStreamClosedFeature, IPersistentStateFeature
{
    private const int MinReadBuffer = 4096;

    private readonly QuicManagedConnectionContext _connection;
    private readonly ILogger _logger;
    private readonly Pipe _input;   // QUIC -> Kestrel
    private readonly Pipe _output;  // Kestrel -> QUIC
    private readonly IDuplexPipe _transport;
    private FeatureCollection _features = null!;
    private int _featuresRevision;
    private QuicStream? _stream;
    private bool _canReuse;
    private bool _aborted;   // a local or peer abort: the context is not reused
    private bool _receivedEnd; // the receive loop read the peer's FIN
    private bool _sentEnd;     // the send loop wrote our FIN and it was acknowledged
    private CancellationTokenSource? _closedSource;
    private string? _connectionId;
    private readonly Lock _lock = new();
    private IDictionary<object, object?>? _items;
    private IDictionary<object, object?>? _persistentState;
    private List<(Action<object?> Callback, object? State)>? _onClosed;
    private bool _streamClosed;
    private long? _error;
    private Exception? _readShutdownReason;
    private Exception? _writeShutdownReason;
    private Task _processing = Task.CompletedTask;
    private volatile bool _receiveDone;
    private volatile Exception? _peerWriteAbort;

    /// <summary>
    /// A context for <paramref name="stream"/>. Request streams that end cleanly go back to their connection's pool
    /// (<see cref="Dispose"/>) and serve a later stream (<see cref="Initialize"/>), as with Kestrel's own transport:
    /// Kestrel keeps its per-stream HTTP/3 state (header buffers, request and response objects) in the
    /// <see cref="IPersistentStateFeature"/> and reuses it with the context.
    /// </summary>
    public QuicManagedStreamContext(QuicManagedConnectionContext connection, QuicStream stream)
    {
        _connection = connection;
        _logger = connection.Logger;
        QuicManagedTransportOptions options = connection.Options;
        long readLimit = options.MaxReadBufferSize ?? 0;
        long writeLimit = options.MaxWriteBufferSize ?? 0;
        // As Kestrel's own transport: Kestrel's reads resume on the thread pool (never on the QUIC thread that received),
        // our send loop runs inline on the thread that flushed (no hop between a response write and the QUIC stream).
        _input = new Pipe(new PipeOptions(null, PipeScheduler.ThreadPool, PipeScheduler.Inline, readLimit, readLimit / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(null, PipeScheduler.Inline, PipeScheduler.ThreadPool, writeLimit, writeLimit / 2, useSynchronizationContext: false));
        _transport = new DuplexPipe(_input.Reader, _output.Writer);
        Transport = _transport;
        LocalEndPoint = connection.LocalEndPoint;
        RemoteEndPoint = connection.RemoteEndPoint;
        SetFeatures();
        Initialize(stream);
    }

    private void SetFeatures()
    {
        _features = new FeatureCollection();
        _features.Set<IStreamDirectionFeature>(this);
        _features.Set<IStreamIdFeature>(this);
        _features.Set<IProtocolErrorCodeFeature>(this);
        _features.Set<IStreamAbortFeature>(this);
        _features.Set<IStreamClosedFeature>(this);
        _features.Set<IPersistentStateFeature>(this);
        // Kestrel's HTTP/3 takes the request scheme (https) and the client certificate from the stream's features.
        _features.Set<ITlsConnectionFeature>(_connection);
        _featuresRevision = _features.Revision;
    }

    /// <summary>Takes <paramref name="stream"/>: everything of the previous stream is reset except the persistent state.</summary>
    public void Initialize(QuicStream stream)
    {
        _stream = stream;
        StreamId = stream.Id;
        CanRead = stream.CanRead;
        CanWrite = stream.CanWrite;
        if (_features.Revision != _featuresRevision)
        {
            SetFeatures(); // features added during the previous stream belong to it
        }

        Transport = _transport;
        _connectionId = null;
        _items = null;
        _onClosed?.Clear();
        _streamClosed = false;
        _closedSource = null;
        _error = null;
        _readShutdownReason = null;
        _writeShutdownReason = null;
        _peerWriteAbort = null;
        _canReuse = false;
        _aborted = false;
        _receivedEnd = false;
        _sentEnd = false;
        _processing = Task.CompletedTask;
        _receiveDone = false;
    }

    public bool CanRead { get; private set; }

    public bool CanWrite { get; private set; }

    public long StreamId { get; private set; }

    public long Error
    {
        get => _error ?? -1;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            _error = value;
        }
    }

    public override string ConnectionId
    {
        get => _connectionId ??= _connection.ConnectionId + ":" + StreamId.ToString(System.Globalization.CultureInfo.InvariantCulture);
        set => _connectionId = value;
    }

    /// <summary>Cancelled when both directions are over; made only when asked for (Kestrel's HTTP/3 uses <see cref="IStreamClosedFeature"/>).</summary>
    public override CancellationToken ConnectionClosed
    {
        get
        {
            lock (_lock)
            {
                if (_closedSource is null)
                {
                    _closedSource = new CancellationTokenSource();
                    if (_streamClosed)
                    {
                        _closedSource.Cancel();
                    }
                }

                return _closedSource.Token;
            }
        }
        set => throw new NotSupportedException();
    }

    public override IFeatureCollection Features => _features;

    public override IDictionary<object, object?> Items { get => _items ??= new Dictionary<object, object?>(); set => _items = value; }

    public override IDuplexPipe Transport { get; set; }

    IDictionary<object, object?> IPersistentStateFeature.State => _persistentState ??= new Dictionary<object, object?>();

    private long ErrorOrDefault => _error ?? _connection.Options.DefaultStreamErrorCode;

    public void Start()
    {
        QuicStream stream = _stream!;
        _receiveDone = !CanRead;
        ValueTask receive = CanRead ? ReceiveLoopAsync(stream) : ValueTask.CompletedTask;
        ValueTask send = CanWrite ? SendLoopAsync(stream) : ValueTask.CompletedTask;
        _processing = RunAsync(receive, send);
    }

    // The loops and the watch are awaited exactly once (here and in the send loop): their state machines are pooled.
    private async Task RunAsync(ValueTask receive, ValueTask send)
    {
        await receive.ConfigureAwait(false);
        await send.ConfigureAwait(false);
        FireClosed();
    }

    /// <summary>
    /// The peer can end our sending (STOP_SENDING, or the connection going away) while Kestrel writes nothing (a handler
    /// still waiting, or a response already written): the send loop learns it here rather than at its next write.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WatchWritesClosedAsync(QuicStream stream)
    {
        try
        {
            await stream.WritesClosed.ConfigureAwait(false);
        }
#pragma warning disable CA1031 // whatever ended the write side is handed to the send loop, which classifies it
        catch (Exception ex)
#pragma warning restore CA1031
        {
            _peerWriteAbort = ex;
            _aborted = true;
            _output.Reader.CancelPendingRead();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask ReceiveLoopAsync(QuicStream stream)
    {
        Exception? error = null;
        PipeWriter writer = _input.Writer;
        try
        {
            while (true)
            {
                Memory<byte> memory = writer.GetMemory(MinReadBuffer);
                int n = await stream.ReadAsync(memory).ConfigureAwait(false);
                if (n == 0)
                {
                    _receivedEnd = true;
                    break; // FIN
                }

                writer.Advance(n);
                if (stream.ReadsClosed.IsCompletedSuccessfully)
                {
                    // The last bytes (FIN seen): Kestrel gets them and the end together, so it knows at once that no
                    // body follows the request headers.
                    _receivedEnd = true;
                    break;
                }

                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break; // Kestrel stopped reading
                }
            }
        }
        catch (QuicException ex) when (ex.QuicError is QuicError.StreamAborted or QuicError.ConnectionAborted)
        {
            // RESET_STREAM from the peer, or the peer closed the connection: Kestrel sees a reset with the peer's code.
            OnPeerAbort(ex, "receive");
            error = new ConnectionResetException(ex.Message, ex);
        }
        catch (QuicException ex) when (ex.QuicError is QuicError.OperationAborted)
        {
            error = new ConnectionAbortedException(ex.Message, ex); // our own AbortRead
        }
        catch (QuicException ex)
        {
            error = new ConnectionResetException(ex.Message, ex); // idle timeout, the peer unreachable
        }
        catch (Exception ex) when (ex is ObjectDisposedException or OperationCanceledException or InvalidOperationException)
        {
            error = new ConnectionAbortedException(ex.Message, ex);
        }
        finally
        {
            // A local abort (AbortRead / Abort) is the real reason the loop ended.
            Exception? reason;
            lock (_lock)
            {
                reason = _readShutdownReason ?? error;
            }

            await writer.CompleteAsync(reason).ConfigureAwait(false);
            _receiveDone = true;
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendLoopAsync(QuicStream stream)
    {
        PipeReader reader = _output.Reader;
        ValueTask watch = WatchWritesClosedAsync(stream);
        Exception? unexpected = null;
        bool sentEnd = false;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    if (_peerWriteAbort is Exception peer)
                    {
                        ExceptionDispatchInfo.Throw(peer);
                    }

                    break; // Abort() / AbortWrite()
                }

                ReadOnlySequence<byte> buffer = result.Buffer;
                bool end = result.IsCompleted;
                if (buffer.IsSingleSegment)
                {
                    if (!buffer.IsEmpty || end)
                    {
                        await stream.WriteAsync(buffer.First, completeWrites: end).ConfigureAwait(false);
                    }
                }
                else
                {
                    SequencePosition position = buffer.Start;
                    while (buffer.TryGet(ref position, out ReadOnlyMemory<byte> segment))
                    {
                        bool last = position.GetObject() is null;
                        await stream.WriteAsync(segment, completeWrites: end && last).ConfigureAwait(false);
                    }
                }

                reader.AdvanceTo(buffer.End);
                if (end)
                {
                    sentEnd = true;
                    break;
                }
            }
        }
        catch (QuicException ex) when (ex.QuicError is QuicError.StreamAborted or QuicError.ConnectionAborted)
        {
            // STOP_SENDING from the peer or the peer closed the connection: an ordinary client cancel. Kestrel learns
            // it through the error code and the closed notification; its output completes without an error.
            OnPeerAbort(ex, "send");
        }
        catch (Exception ex) when (ex is QuicException or ObjectDisposedException or OperationCanceledException)
        {
            // Our own abort, an idle timeout or disposal: nothing for Kestrel's writes to report.
            LogSendEnded(_logger, ConnectionId, ex.Message);
        }
        catch (Exception ex)
        {
            // Kestrel completed the output with an error: the response is abandoned, so is the stream's write side.
            LogSendFailed(_logger, ConnectionId, ex);
            AbortWriteSide(ErrorOrDefault);
            unexpected = ex;
        }
        finally
        {
            // The write side is over once our FIN is acknowledged or the side was reset (as in Kestrel's transport).
            await watch.ConfigureAwait(false);
            _sentEnd = sentEnd && unexpected is null && _peerWriteAbort is null;
            await reader.CompleteAsync(unexpected).ConfigureAwait(false);
            _input.Writer.CancelPendingFlush();
        }
    }

    /// <summary>The peer reset its side or asked us to stop (or closed the connection): its code is the stream's error.</summary>
    private void OnPeerAbort(QuicException ex, string side)
    {
        _aborted = true;
        if (ex.ApplicationErrorCode is long code && code >= 0)
        {
            lock (_lock)
            {
                _error ??= code;
            }
        }

        LogPeerAbort(_logger, ConnectionId, side, ex.ApplicationErrorCode ?? -1);
    }

    public void AbortRead(long errorCode, ConnectionAbortedException abortReason)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(errorCode);
        if (!CanRead)
        {
            throw new InvalidOperationException("This stream cannot be read.");
        }

        lock (_lock)
        {
            _readShutdownReason ??= abortReason;
            _aborted = true;
        }

        TryAbort(QuicAbortDirection.Read, errorCode);
    }

    public void AbortWrite(long errorCode, ConnectionAbortedException abortReason)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(errorCode);
        if (!CanWrite)
        {
            throw new InvalidOperationException("This stream cannot be written.");
        }

        lock (_lock)
        {
            _writeShutdownReason ??= abortReason;
            _aborted = true;
        }

        AbortWriteSide(errorCode);
        _output.Reader.CancelPendingRead();
    }

    public override void Abort(ConnectionAbortedException abortReason)
    {
        lock (_lock)
        {
            _readShutdownReason ??= abortReason;
            _writeShutdownReason ??= abortReason;
            _aborted = true;
        }

        long code = ErrorOrDefault;
        LogAbort(_logger, ConnectionId, code, abortReason.Message);
        if (CanRead)
        {
            TryAbort(QuicAbortDirection.Read, code);
        }

        if (CanWrite)
        {
            AbortWriteSide(code);
            _output.Reader.CancelPendingRead();
        }
    }

    private void AbortWriteSide(long code) => TryAbort(QuicAbortDirection.Write, code);

    private void TryAbort(QuicAbortDirection direction, long code)
    {
        QuicStream? stream = _stream;
        if (stream is null)
        {
            return; // after DisposeAsync: the stream is gone
        }

        try
        {
            stream.Abort(direction, code);
        }
        catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException or QuicException)
        {
            // Already closed in that direction.
        }
    }

    void IStreamClosedFeature.OnClosed(Action<object?> callback, object? state)
    {
        lock (_lock)
        {
            if (!_streamClosed)
            {
                (_onClosed ??= new()).Add((callback, state));
                return;
            }
        }

        callback(state);
    }

    private void FireClosed()
    {
        List<(Action<object?> Callback, object? State)>? callbacks;
        CancellationTokenSource? closed;
        lock (_lock)
        {
            _streamClosed = true;
            callbacks = _onClosed;
            _onClosed = null;
            closed = _closedSource;
        }

        if (callbacks is not null)
        {
            foreach ((Action<object?> callback, object? state) in callbacks)
            {
                try
                {
                    callback(state);
                }
#pragma warning disable CA1031 // one failing callback must not keep the others (and the closed token) from running
                catch (Exception ex)
#pragma warning restore CA1031
                {
                    LogCallbackFailed(_logger, ConnectionId, ex);
                }
            }
        }

        try
        {
            closed?.Cancel();
        }
        catch (AggregateException ex)
        {
            LogCallbackFailed(_logger, ConnectionId, ex);
        }
    }

    public override async ValueTask DisposeAsync()
    {
        if (_stream is null)
        {
            return;
        }

        await Transport.Input.CompleteAsync().ConfigureAwait(false);
        await Transport.Output.CompleteAsync().ConfigureAwait(false);
        if (!_receiveDone)
        {
            // Kestrel is done with the stream while the peer still sends: stop its side (what disposing a stream does).
            TryAbort(QuicAbortDirection.Read, ErrorOrDefault);
        }

        QuicStream stream = _stream;
        await _processing.ConfigureAwait(false);
        await stream.DisposeAsync().ConfigureAwait(false);
        lock (_lock)
        {
            _closedSource?.Dispose();
            _closedSource = null;
            // Only a request stream that ended cleanly both ways serves again (Kestrel's own transport is as careful).
            _canReuse = CanRead && CanWrite && _receivedEnd && _sentEnd && !_aborted && _error is null;
            _stream = null;
        }
    }

    /// <summary>
    /// Kestrel's HTTP/3 calls this once the stream is completely done (after <see cref="DisposeAsync"/>): a context
    /// that ended cleanly goes back to its connection's pool.
    /// </summary>
    public void Dispose()
    {
        bool reuse;
        lock (_lock)
        {
            reuse = _canReuse;
            _canReuse = false;
        }

        if (reuse)
        {
            // Both pipes are completed at both ends (the loops and DisposeAsync finished): they can start over.
            _input.Reset();
            _output.Reset();
            _connection.ReturnStream(this);
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }

    private static void LogAbort(ILogger logger, string connectionId, long errorCode, string reason) => TransportLog.StreamAbort(logger, connectionId, errorCode, reason);

    private static void LogSendFailed(ILogger logger, string connectionId, Exception exception) => TransportLog.StreamSendFailed(logger, connectionId, exception);

    private static void LogCallbackFailed(ILogger logger, string connectionId, Exception exception) => TransportLog.StreamCallbackFailed(logger, connectionId, exception);

    private static void LogPeerAbort(ILogger logger, string connectionId, string side, long errorCode) => TransportLog.StreamPeerAbort(logger, connectionId, side, errorCode);

    private static void LogSendEnded(ILogger logger, string connectionId, string reason) => TransportLog.StreamSendEnded(logger, connectionId, reason);
}
