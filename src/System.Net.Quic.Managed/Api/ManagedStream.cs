using System.Net.Quic.Managed.Core;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>
/// A public <see cref="QuicStream"/> over one core stream. Reads and writes are requests completed on the driver
/// thread (one of each at a time, as in System.Net.Quic); aborts take effect for the app at once and reach the core
/// through the driver. Cancelling a pending read or write aborts that direction with the connection's
/// DefaultStreamErrorCode, as System.Net.Quic does.
/// </summary>
internal sealed class ManagedStream : QuicStreamImpl
{
    private readonly ManagedConnection _connection;
    private readonly bool _canReadDirection;
    private readonly bool _canWriteDirection;
    private readonly TaskCompletionSource _readsClosed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _writesClosed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // Driver thread only.
    private StreamReadRequest? _pendingRead;
    private StreamWriteRequest? _pendingWrite;
    private bool _readFinished;
    private bool _finWritten;
    private bool _finRequested;
    private ulong? _peerResetCode;
    private ulong? _peerStopSendingCode;
    private bool _ended;

    // Set on the driver thread when the connection ends; read anywhere (reads are served from it without the driver).
    private volatile EndedStreamReads? _endedReads;

    // App-visible.
    private volatile bool _readAborted;
    private volatile bool _writeAborted;
    private volatile bool _writesCompleted;
    private int _disposed;
    private int _readInProgress;
    private int _writeInProgress;
    // Reused for every read and write (one of each at a time): no allocation per operation.
    private StreamReadRequest? _readRequest;
    private StreamWriteRequest? _writeRequest;

    public ManagedStream(ManagedConnection connection, long id, QuicStreamType type, bool canRead, bool canWrite)
    {
        _connection = connection;
        Id = id;
        Type = type;
        _canReadDirection = canRead;
        _canWriteDirection = canWrite;
        if (!canRead) _readsClosed.TrySetResult();
        if (!canWrite) _writesClosed.TrySetResult();
    }

    public override long Id { get; }

    public override QuicStreamType Type { get; }

    public override bool CanRead => _canReadDirection && Volatile.Read(ref _disposed) == 0;

    public override bool CanWrite => _canWriteDirection && Volatile.Read(ref _disposed) == 0;

    public override Task ReadsClosed => _readsClosed.Task;

    public override Task WritesClosed => _writesClosed.Task;

    private Connection Core => _connection.Core!;

    private static void Fault(TaskCompletionSource completion, Exception exception)
    {
        // Marked observed: nobody has to await ReadsClosed/WritesClosed.
        if (completion.TrySetException(exception)) _ = completion.Task.Exception;
    }

    private void Post(Action<object, long> action) => _connection.Host.Post(new DriverCall(action, this));

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canReadDirection) throw new InvalidOperationException("Reading is not allowed on a unidirectional stream opened locally.");
        if (cancellationToken.IsCancellationRequested) return ValueTask.FromCanceled<int>(cancellationToken);
        if (Interlocked.Exchange(ref _readInProgress, 1) != 0) throw new InvalidOperationException("A read is already in progress on this stream.");
        if (_readAborted)
        {
            Volatile.Write(ref _readInProgress, 0);
            return ValueTask.FromException<int>(QuicExceptionFactory.OperationAborted("Reading was aborted on this stream."));
        }
        if (_endedReads is { } rest && !_readAborted)
        {
            // The connection ended: what arrived before its end is read here, without the driver (which may be gone).
            int n = buffer.IsEmpty ? 0 : ReadAfterEnd(rest, buffer.Span);
            Volatile.Write(ref _readInProgress, 0);
            return n >= 0 ? ValueTask.FromResult(n) : ValueTask.FromException<int>(rest.Exception);
        }
        if (_connection.EndException is { } ended && _connection.Host.IsDisposed)
        {
            Volatile.Write(ref _readInProgress, 0);
            return ValueTask.FromException<int>(ended);
        }
        StreamReadRequest request = _readRequest ??= new StreamReadRequest(this);
        ValueTask<int> result = request.Start(buffer, cancellationToken);
        _connection.Host.Post(request);
        return result;
    }

    /// <summary>The driver stopped before this read ran (its thread is gone: this runs on the poster's or the disposer's).</summary>
    public void OnReadAbandoned(StreamReadRequest request)
    {
        if (request.Buffer.IsEmpty) request.Complete(0);
        else if (_endedReads is { } rest && !_readAborted && ReadAfterEnd(rest, request.Buffer.Span) is int n and >= 0) request.Complete(n);
        else request.Fail(_endedReads?.Exception ?? _connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."));
    }

    /// <summary>The driver stopped before this write ran.</summary>
    public void OnWriteAbandoned(StreamWriteRequest request)
        => request.Fail(_connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."));

    public void StartRead(StreamReadRequest request)
    {
        _pendingRead = request;
        TryCompleteRead();
    }

    private void CompleteRead(int bytes)
    {
        StreamReadRequest request = _pendingRead!;
        _pendingRead = null;
        request.Complete(bytes);
    }

    private void FailRead(Exception exception)
    {
        StreamReadRequest? request = _pendingRead;
        if (request is null) return;
        _pendingRead = null;
        request.Fail(exception);
    }

    /// <summary>Driver thread: completes the pending read if the core has something for it.</summary>
    private void TryCompleteRead()
    {
        if (_pendingRead is not { } request) return;
        if (_readAborted) { FailRead(QuicExceptionFactory.OperationAborted("Reading was aborted on this stream.")); return; }
        if (_peerResetCode is { } code) { FailRead(QuicExceptionFactory.StreamAborted(code, "reset the stream")); return; }
        if (_readFinished || request.Buffer.IsEmpty) { CompleteRead(0); return; }
        if (_ended)
        {
            if (_endedReads is not { } rest) FailRead(_connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."));
            else if (ReadAfterEnd(rest, request.Buffer.Span) is int read and >= 0) CompleteRead(read);
            else FailRead(rest.Exception);
            return;
        }
        int n = Core.ReadStream(Id, request.Buffer.Span, out bool fin, out bool reset, out ulong resetCode);
        if (reset)
        {
            OnPeerReset(resetCode);
            FailRead(QuicExceptionFactory.StreamAborted(resetCode, "reset the stream"));
            return;
        }
        if (fin)
        {
            _readFinished = true;
            _readsClosed.TrySetResult();
        }
        if (n > 0 || fin) CompleteRead(n);
    }

    private void OnPeerReset(ulong code)
    {
        _peerResetCode = code;
        Fault(_readsClosed, QuicExceptionFactory.StreamAborted(code, "reset the stream"));
    }

    /// <summary>Driver thread: data, FIN or a reset arrived.</summary>
    public void OnReadable()
    {
        if (_pendingRead is not null)
        {
            TryCompleteRead();
            return;
        }
        if (_readFinished || _peerResetCode is not null || _readAborted || _ended) return;
        // Nobody reads now: still learn about a reset or the end, so ReadsClosed completes (nothing is consumed).
        Core.ReadStream(Id, Span<byte>.Empty, out bool fin, out bool reset, out ulong code);
        if (reset) OnPeerReset(code);
        else if (fin)
        {
            _readFinished = true;
            _readsClosed.TrySetResult();
        }
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canWriteDirection) throw new InvalidOperationException("Writing is not allowed on a unidirectional stream opened by the peer.");
        if (cancellationToken.IsCancellationRequested) return ValueTask.FromCanceled(cancellationToken);
        if (_writeAborted) return ValueTask.FromException(QuicExceptionFactory.OperationAborted("Writing was aborted on this stream."));
        if (_writesCompleted) throw new InvalidOperationException("Writing is not allowed after the write side was completed.");
        if (buffer.IsEmpty && !completeWrites) return ValueTask.CompletedTask;
        if (Interlocked.Exchange(ref _writeInProgress, 1) != 0) throw new InvalidOperationException("A write is already in progress on this stream.");
        if (completeWrites) _writesCompleted = true;
        if (_connection.EndException is { } ended && _connection.Host.IsDisposed)
        {
            Volatile.Write(ref _writeInProgress, 0);
            return ValueTask.FromException(ended);
        }
        StreamWriteRequest request = _writeRequest ??= new StreamWriteRequest(this);
        ValueTask result = request.Start(buffer, completeWrites, cancellationToken);
        _connection.Host.Post(request);
        return result;
    }

    public void StartWrite(StreamWriteRequest request)
    {
        _pendingWrite = request;
        TryCompleteWrite();
    }

    private void FailWrite(Exception exception)
    {
        StreamWriteRequest? request = _pendingWrite;
        if (request is null) return;
        _pendingWrite = null;
        request.Fail(exception);
    }

    private Exception? WriteFailure()
    {
        if (_writeAborted) return QuicExceptionFactory.OperationAborted("Writing was aborted on this stream.");
        if (_peerStopSendingCode is { } code) return QuicExceptionFactory.StreamAborted(code, "asked to stop sending (STOP_SENDING)");
        if (_ended) return _connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed.");
        return null;
    }

    /// <summary>Driver thread: moves as much of the pending write into the core as its send buffer takes.</summary>
    private void TryCompleteWrite()
    {
        if (_pendingWrite is not { } request) return;
        CheckStopSending();
        if (WriteFailure() is { } failure)
        {
            FailWrite(failure);
            return;
        }
        bool fin = request.Fin || _finRequested;
        int accepted = WriteCore(request.Remaining.Span, fin);
        if (accepted < 0)
        {
            FailWrite(WriteFailure() ?? QuicExceptionFactory.OperationAborted("The stream's write side is closed."));
            return;
        }
        request.Remaining = request.Remaining.Slice(accepted);
        if (!request.Remaining.IsEmpty) return;
        if (fin) _finWritten = true;
        _pendingWrite = null;
        request.Complete();
    }

    /// <summary>Driver thread: hands data to the core; -1 when the send side is gone (reset after STOP_SENDING, or finished).</summary>
    private int WriteCore(ReadOnlySpan<byte> data, bool fin)
    {
        CheckStopSending();
        if (_peerStopSendingCode is not null || _ended) return -1;
        try
        {
            return Core.WriteStream(Id, data, fin);
        }
        catch (InvalidOperationException)
        {
            // The core throws for a send side past Send/Ready (e.g. reset in answer to STOP_SENDING) instead of returning 0.
            return -1;
        }
    }

    private void CheckStopSending()
    {
        if (_peerStopSendingCode is not null || _ended) return;
        if (Core.GetStopSendingCode(Id) is { } code)
        {
            _peerStopSendingCode = code;
            Fault(_writesClosed, QuicExceptionFactory.StreamAborted(code, "asked to stop sending (STOP_SENDING)"));
        }
    }

    /// <summary>Driver thread: send buffer space, flow credit, acknowledgments or STOP_SENDING.</summary>
    public void OnWritable()
    {
        if (_ended) return;
        TryCompleteWrite();
        CheckStopSending();
        if (_finWritten && !_writesClosed.Task.IsCompleted && Core.IsStreamWriteComplete(Id)) _writesClosed.TrySetResult();
        RemoveIfDone();
    }

    /// <summary>App thread: the read's result was taken; the next read may start.</summary>
    public void OnReadConsumed() => Volatile.Write(ref _readInProgress, 0);

    /// <summary>App thread: the write's result was taken; the next write may start.</summary>
    public void OnWriteConsumed() => Volatile.Write(ref _writeInProgress, 0);

    // Cancellation callbacks post the generation they belong to: by the time the driver runs them the request may be
    // serving a later operation, which they must not touch. (Allocates only when a token actually fires.)
    public void PostCancel(StreamReadRequest request, short version)
        => _connection.Host.Post(new DriverCall(static (state, _) =>
        {
            var (stream, version) = ((ManagedStream, short))state;
            stream.CancelRead(version);
        }, (this, version)));

    public void PostCancel(StreamWriteRequest request, short version)
        => _connection.Host.Post(new DriverCall(static (state, _) =>
        {
            var (stream, version) = ((ManagedStream, short))state;
            stream.CancelWrite(version);
        }, (this, version)));

    /// <summary>Driver thread: a pending read was cancelled; like System.Net.Quic, the read side is aborted.</summary>
    private void CancelRead(short version)
    {
        if (_pendingRead is not { } request || request.Version != version) return;
        FailRead(new OperationCanceledException(request.CancellationToken));
        AbortReadOnDriver((ulong)_connection.DefaultStreamErrorCode);
    }

    private void CancelWrite(short version)
    {
        if (_pendingWrite is not { } request || request.Version != version) return;
        FailWrite(new OperationCanceledException(request.CancellationToken));
        AbortWriteOnDriver((ulong)_connection.DefaultStreamErrorCode);
    }

    public override void Abort(QuicAbortDirection direction, long errorCode)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(errorCode);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(errorCode, QuicDefaults.MaxErrorCodeValue);
        if (Volatile.Read(ref _disposed) != 0) return;
        bool read = (direction & QuicAbortDirection.Read) != 0 && _canReadDirection;
        bool write = (direction & QuicAbortDirection.Write) != 0 && _canWriteDirection;
        if (read) Post(errorCode, static (state, _) => ((AbortCall)state).Stream.AbortReadOnDriver(((AbortCall)state).Code));
        if (write) Post(errorCode, static (state, _) => ((AbortCall)state).Stream.AbortWriteOnDriver(((AbortCall)state).Code));
    }

    private void Post(long code, Action<object, long> action) => _connection.Host.Post(new DriverCall(action, new AbortCall(this, (ulong)code)));

    private sealed record AbortCall(ManagedStream Stream, ulong Code);

    /// <summary>Driver thread: STOP_SENDING (RFC 9000 §3.5) unless the read side already ended.</summary>
    private void AbortReadOnDriver(ulong code)
    {
        if (_readAborted) return;
        _readAborted = true;
        if (!_readFinished && _peerResetCode is null && !_ended) Core.StopSending(Id, code);
        Exception aborted = QuicExceptionFactory.OperationAborted("Reading was aborted on this stream.");
        FailRead(aborted);
        Fault(_readsClosed, aborted);
    }

    /// <summary>Driver thread: RESET_STREAM (RFC 9000 §3.1) unless everything was already sent and acknowledged.</summary>
    private void AbortWriteOnDriver(ulong code)
    {
        if (_writeAborted) return;
        _writeAborted = true;
        if (!_ended && !(_finWritten && Core.IsStreamWriteComplete(Id))) Core.ResetStream(Id, code);
        Exception aborted = QuicExceptionFactory.OperationAborted("Writing was aborted on this stream.");
        FailWrite(aborted);
        Fault(_writesClosed, aborted);
    }

    public override void CompleteWrites()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canWriteDirection) throw new InvalidOperationException("Writing is not allowed on a unidirectional stream opened by the peer.");
        if (_writeAborted || _writesCompleted) return;
        _writesCompleted = true;
        Post(static (state, _) => ((ManagedStream)state).CompleteWritesOnDriver());
    }

    private void CompleteWritesOnDriver()
    {
        if (_finWritten || _writeAborted || _ended) return;
        if (_pendingWrite is not null)
        {
            _finRequested = true; // the FIN goes with the last byte of the pending write
            return;
        }
        WriteCore(ReadOnlySpan<byte>.Empty, fin: true);
        _finWritten = true;
    }

    /// <summary>
    /// Driver thread: the connection ended; every waiter learns why. Data that arrived before the end stays readable (then
    /// the FIN if it arrived; otherwise reads fail with <paramref name="exception"/> once it is consumed), and a write side
    /// whose data and FIN were all acknowledged (the ACK may have come with the peer's CONNECTION_CLOSE) completed.
    /// </summary>
    public void OnConnectionEnded(Exception exception)
    {
        if (_ended) return;
        Connection? core = _connection.Core;
        bool readOpen = _canReadDirection && !_readFinished && !_readAborted && _peerResetCode is null;
        if (readOpen && core is not null) _endedReads = EndedStreamReads.Take(core, Id, exception);
        if (core is not null) CheckStopSending();
        bool writeDone = _canWriteDirection && _finWritten && !_writeAborted && _peerStopSendingCode is null && core is not null && core.IsStreamWriteComplete(Id);
        _ended = true;
        if (_pendingRead is not null) TryCompleteRead();
        FailWrite(exception);
        if (_endedReads is not { Fin: true }) Fault(_readsClosed, exception);
        else if (_endedReads.IsDrained) ReadAfterEnd(_endedReads, Span<byte>.Empty);
        if (writeDone) _writesClosed.TrySetResult();
        else Fault(_writesClosed, exception);
    }

    /// <summary>Any thread, one read at a time: a read once the connection ended (see <see cref="EndedStreamReads.Read"/>).</summary>
    private int ReadAfterEnd(EndedStreamReads rest, Span<byte> destination)
    {
        int n = rest.Read(destination);
        if (n == 0)
        {
            _readFinished = true;
            _readsClosed.TrySetResult();
        }
        return n;
    }

    /// <summary>Driver thread: a stream opened for an OpenOutboundStreamAsync that was cancelled meanwhile.</summary>
    public void AbandonOnDriver()
    {
        Interlocked.Exchange(ref _disposed, 1);
        DisposeOnDriver();
    }

    /// <summary>
    /// As System.Net.Quic's QuicStream.DisposeAsync: aborts a read side not yet finished (STOP_SENDING with
    /// DefaultStreamErrorCode), completes a write side not yet completed (FIN), then waits until the write side is
    /// closed: everything written, FIN included, acknowledged by the peer (RFC 9000 §3.1 "Data Recvd"), or aborted by
    /// STOP_SENDING. The wait is bounded by the connection's life: it ends when the connection closes or is disposed.
    /// Never throws. (A write still pending at disposal is reset rather than finished: its caller is mid-call.)
    /// </summary>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        if (_connection.Host.IsDisposed) return;
        Post(static (state, _) => ((ManagedStream)state).DisposeOnDriver());
        Task writesClosed = _writesClosed.Task;
        if (!writesClosed.IsCompleted)
        {
            await Task.WhenAny(writesClosed, _connection.Lifetime).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Driver thread: an unfinished read side is aborted with DefaultStreamErrorCode (STOP_SENDING); an unfinished
    /// write side is completed gracefully (FIN), or reset when a write is still pending. The stream stays registered
    /// with the connection until its write side closes, so acknowledgments (and the connection's end) still reach it.
    /// </summary>
    private void DisposeOnDriver()
    {
        ulong code = (ulong)Math.Max(0, _connection.DefaultStreamErrorCode);
        if (!_ended)
        {
            if (_canReadDirection && !_readFinished && !_readAborted && _peerResetCode is null) AbortReadOnDriver(code);
            if (_canWriteDirection && !_writeAborted && _peerStopSendingCode is null)
            {
                if (_pendingWrite is not null) AbortWriteOnDriver(code);
                else if (!_finWritten)
                {
                    WriteCore(ReadOnlySpan<byte>.Empty, fin: true);
                    _finWritten = true;
                }
            }
        }
        // The exceptions are created only when something is left to fail: a stream used to its end (the common case,
        // once per request) completes both tasks before disposal and allocates none.
        if (_pendingRead is not null || _pendingWrite is not null)
        {
            Exception disposed = new ObjectDisposedException(nameof(QuicStream));
            FailRead(disposed);
            FailWrite(disposed);
        }
        if (!_readsClosed.Task.IsCompleted) Fault(_readsClosed, QuicExceptionFactory.OperationAborted("The stream was disposed."));
        if (!_finWritten && !_writesClosed.Task.IsCompleted) Fault(_writesClosed, QuicExceptionFactory.OperationAborted("The stream was disposed."));
        else if (!_ended) OnWritable(); // the FIN may be acknowledged already (or STOP_SENDING arrived)
        RemoveIfDone();
    }

    /// <summary>Driver thread: a disposed stream leaves the connection's table once its write side is closed.</summary>
    private void RemoveIfDone()
    {
        if (Volatile.Read(ref _disposed) != 0 && _writesClosed.Task.IsCompleted) _connection.RemoveStream(Id);
    }

    public override string ToString() => $"QuicStream {Id} ({Type})";
}
