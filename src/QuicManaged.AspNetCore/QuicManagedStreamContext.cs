using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO.Pipelines;
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
/// send loop copies the output pipe into the stream (FIN when Kestrel completes it). The features are what Kestrel's
/// HTTP/3 reads: stream id and direction, error code, read/write abort, and the closed notification.
/// </summary>
internal sealed partial class QuicManagedStreamContext : ConnectionContext,
    IStreamDirectionFeature, IStreamIdFeature, IProtocolErrorCodeFeature, IStreamAbortFeature, IStreamClosedFeature, IPersistentStateFeature
{
    private const int MinReadBuffer = 4096;

    private readonly QuicManagedConnectionContext _connection;
    private readonly QuicStream _stream;
    private readonly ILogger _logger;
    private readonly Pipe _input;   // QUIC -> Kestrel
    private readonly Pipe _output;  // Kestrel -> QUIC
    private readonly FeatureCollection _features = new();
    private readonly CancellationTokenSource _closedSource = new();
    private readonly Lock _lock = new();
    private IDictionary<object, object?> _items = new Dictionary<object, object?>();
    private IDictionary<object, object?>? _persistentState;
    private List<(Action<object?> Callback, object? State)>? _onClosed;
    private bool _streamClosed;
    private long? _error;
    private Exception? _readShutdownReason;
    private Exception? _writeShutdownReason;
    private Task _processing = Task.CompletedTask;
    private Task _receive = Task.CompletedTask;

    public QuicManagedStreamContext(QuicManagedConnectionContext connection, QuicStream stream)
    {
        _connection = connection;
        _stream = stream;
        _logger = connection.Logger;
        StreamId = stream.Id;
        CanRead = stream.CanRead;
        CanWrite = stream.CanWrite;
        QuicManagedTransportOptions options = connection.Options;
        long readLimit = options.MaxReadBufferSize ?? 0;
        long writeLimit = options.MaxWriteBufferSize ?? 0;
        _input = new Pipe(new PipeOptions(pauseWriterThreshold: readLimit, resumeWriterThreshold: readLimit / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pauseWriterThreshold: writeLimit, resumeWriterThreshold: writeLimit / 2, useSynchronizationContext: false));
        Transport = new DuplexPipe(_input.Reader, _output.Writer);
        ConnectionId = connection.ConnectionId + ":" + StreamId.ToString(System.Globalization.CultureInfo.InvariantCulture);
        ConnectionClosed = _closedSource.Token;
        LocalEndPoint = connection.LocalEndPoint;
        RemoteEndPoint = connection.RemoteEndPoint;
        _features.Set<IStreamDirectionFeature>(this);
        _features.Set<IStreamIdFeature>(this);
        _features.Set<IProtocolErrorCodeFeature>(this);
        _features.Set<IStreamAbortFeature>(this);
        _features.Set<IStreamClosedFeature>(this);
        _features.Set<IPersistentStateFeature>(this);
        // Kestrel's HTTP/3 takes the request scheme (https) and the client certificate from the stream's features.
        _features.Set<ITlsConnectionFeature>(connection);
    }

    public bool CanRead { get; }

    public bool CanWrite { get; }

    public long StreamId { get; }

    public long Error
    {
        get => _error ?? -1;
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            _error = value;
        }
    }

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features => _features;

    public override IDictionary<object, object?> Items { get => _items; set => _items = value; }

    public override IDuplexPipe Transport { get; set; }

    IDictionary<object, object?> IPersistentStateFeature.State => _persistentState ??= new Dictionary<object, object?>();

    private long ErrorOrDefault => _error ?? _connection.Options.DefaultStreamErrorCode;

    public void Start()
    {
        _receive = CanRead ? ReceiveLoopAsync() : Task.CompletedTask;
        Task send = CanWrite ? SendLoopAsync() : Task.CompletedTask;
        _processing = RunAsync(_receive, send);
    }

    private async Task RunAsync(Task receive, Task send)
    {
        await receive.ConfigureAwait(false);
        await send.ConfigureAwait(false);
        FireClosed();
    }

    private async Task ReceiveLoopAsync()
    {
        Exception? error = null;
        PipeWriter writer = _input.Writer;
        try
        {
            while (true)
            {
                Memory<byte> memory = writer.GetMemory(MinReadBuffer);
                int n = await _stream.ReadAsync(memory).ConfigureAwait(false);
                if (n == 0)
                {
                    break; // FIN
                }

                writer.Advance(n);
                FlushResult flushed = await writer.FlushAsync().ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    break; // Kestrel stopped reading
                }
            }
        }
        catch (QuicException ex) when (ex.QuicError == QuicError.StreamAborted)
        {
            // RESET_STREAM from the peer: Kestrel sees a reset with the peer's code.
            _error ??= ex.ApplicationErrorCode;
            error = new ConnectionResetException(ex.Message, ex);
        }
        catch (QuicException ex)
        {
            error = new ConnectionResetException(ex.Message, ex);
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
        }
    }

    private async Task SendLoopAsync()
    {
        PipeReader reader = _output.Reader;
        Exception? failure = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break; // Abort()
                }

                ReadOnlySequence<byte> buffer = result.Buffer;
                bool end = result.IsCompleted;
                if (buffer.IsSingleSegment)
                {
                    if (!buffer.IsEmpty || end)
                    {
                        await _stream.WriteAsync(buffer.First, completeWrites: end).ConfigureAwait(false);
                    }
                }
                else
                {
                    SequencePosition position = buffer.Start;
                    while (buffer.TryGet(ref position, out ReadOnlyMemory<byte> segment))
                    {
                        bool last = position.GetObject() is null;
                        await _stream.WriteAsync(segment, completeWrites: end && last).ConfigureAwait(false);
                    }
                }

                reader.AdvanceTo(buffer.End);
                if (end)
                {
                    break;
                }
            }
        }
        catch (QuicException ex)
        {
            // STOP_SENDING from the peer or the connection went away: Kestrel's writes fail with a reset.
            failure = new ConnectionResetException(ex.Message, ex);
        }
        catch (Exception ex) when (ex is ObjectDisposedException or OperationCanceledException)
        {
            failure = new ConnectionAbortedException(ex.Message, ex);
        }
        catch (Exception ex)
        {
            // Kestrel completed the output with an error: the response is abandoned, so is the stream's write side.
            LogSendFailed(_logger, ConnectionId, ex);
            AbortWriteSide(ErrorOrDefault);
            failure = ex;
        }
        finally
        {
            Exception? reason;
            lock (_lock)
            {
                reason = _writeShutdownReason ?? failure;
            }

            await reader.CompleteAsync(reason).ConfigureAwait(false);
            _input.Writer.CancelPendingFlush();
        }
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
        try
        {
            _stream.Abort(direction, code);
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
        lock (_lock)
        {
            _streamClosed = true;
            callbacks = _onClosed;
            _onClosed = null;
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
            _closedSource.Cancel();
        }
        catch (AggregateException ex)
        {
            LogCallbackFailed(_logger, ConnectionId, ex);
        }
    }

    public override async ValueTask DisposeAsync()
    {
        await Transport.Input.CompleteAsync().ConfigureAwait(false);
        await Transport.Output.CompleteAsync().ConfigureAwait(false);
        if (!_receive.IsCompleted)
        {
            // Kestrel is done with the stream while the peer still sends: stop its side (what disposing a stream does).
            TryAbort(QuicAbortDirection.Read, ErrorOrDefault);
        }

        await _processing.ConfigureAwait(false);
        await _stream.DisposeAsync().ConfigureAwait(false);
        _closedSource.Dispose();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }

    private static void LogAbort(ILogger logger, string connectionId, long errorCode, string reason) => TransportLog.StreamAbort(logger, connectionId, errorCode, reason);

    private static void LogSendFailed(ILogger logger, string connectionId, Exception exception) => TransportLog.StreamSendFailed(logger, connectionId, exception);

    private static void LogCallbackFailed(ILogger logger, string connectionId, Exception exception) => TransportLog.StreamCallbackFailed(logger, connectionId, exception);
}
