using System.Net.Quic.Managed.Core;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A public <see cref="QuicStream"/> over one core stream. As System.Net.Quic's ReceiveBuffers, the driver thread
/// moves received bytes into a per-stream buffer and ReadAsync drains it on the caller's thread, completing
/// synchronously when data or FIN is there; only an empty buffer makes it wait. As there, the first
/// <see cref="AdmittedBytes"/> buffered give their flow-control credit back at once (the peer may send a receive
/// window beyond them before the application reads); bytes buffered beyond keep their credit until consumed. Credit
/// goes back to the core in coalesced reports. When the connection ends before the application read to the end,
/// ReadsClosed faults with the connection's exception at once; buffered bytes stay readable. A small write is staged (copied on
/// the caller's thread, see <see cref="StreamWriteStage"/>) and completes at once; a larger one, or one that finds the
/// stage full, is a request completed on the driver thread (one write at a time either way). Cancelling a read or write (a token already cancelled included, unless that side
/// is over) aborts that direction with the connection's DefaultStreamErrorCode, as System.Net.Quic does.
/// </summary>
internal sealed class ManagedStream : QuicStreamImpl
{
    // The read side, changed under lock (this) from any thread (the stream is internal: nothing else locks it):
    //   Receiving -> FinReceived      the driver moved the FIN into the buffer: reads drain it, then see the end
    //   FinReceived -> Finished       the end was reached with the buffer empty (by a read, or by the driver when the
    //                                 FIN came with nothing left to read): ReadsClosed completes
    //   Receiving -> Reset            the peer's RESET_STREAM: the buffer is dropped, reads throw StreamAborted
    //   Receiving -> ConnectionEnded  the connection ended before the FIN: reads drain the buffer, then throw why
    //   Receiving|FinReceived|ConnectionEnded -> Aborted   the application stopped reading (Abort, a cancelled read,
    //                                 disposal): the buffer is dropped, STOP_SENDING goes out while the connection
    //                                 lives, reads throw OperationAborted
    // Finished, Reset and Aborted are final; a stream with no read direction starts Finished. A connection that ends
    // after the FIN leaves FinReceived as it is: what was received is read to its end.
    private enum ReadState : byte
    {
        Receiving,
        FinReceived,
        Finished,
        ConnectionEnded,
        Aborted,
        Reset,
    }

    // The write side, changed on the driver thread only, read anywhere:
    //   Open -> FinPending            the FIN was asked for while a write or staged bytes are still to go: it goes with
    //                                 their last byte
    //   Open|FinPending -> FinSent    the FIN is in the core; WritesClosed completes once the peer acknowledged all
    //   Open|FinPending|FinSent -> StopSending       the peer's STOP_SENDING: writes throw StreamAborted with its code
    //   Open|FinPending|FinSent|StopSending -> Aborted   RESET_STREAM (Abort, a cancelled write, disposal mid-write):
    //                                 writes throw OperationAborted
    //   Open|FinPending|FinSent -> ConnectionEnded   the connection ended (or the stream's open could not run):
    //                                 writes throw the connection's exception
    // StopSending, Aborted and ConnectionEnded are over: nothing more goes into the core, writes are not staged.
    // Aborted and ConnectionEnded are final.
    private enum WriteState : byte
    {
        Open,
        FinPending,
        FinSent,
        StopSending,
        Aborted,
        ConnectionEnded,
    }

    /// <summary>What the application asked of the write side before the driver acted on it (app threads, Interlocked).</summary>
    [Flags]
    private enum WriteRequests
    {
        None = 0,
        Complete = 1, // CompleteWrites or a write with completeWrites: later writes throw
        Abort = 2,    // Abort(Write) or a write whose token was cancelled: later writes throw OperationAborted
    }

    // Immutable.
    private readonly ManagedConnection _connection;
    private readonly bool _canReadDirection;
    private readonly bool _canWriteDirection;
    // Under lock (this): the received bytes, created with the first of them and dropped once the read side is over
    // (Finished, Reset, Aborted; or ConnectionEnded with nothing left), so a stream whose reading is done holds none.
    private StreamReceiveQueue? _received;

    // Any thread, compare-and-swap inside: the application's view of each side's end. Mutable structs, used through
    // the field, never copied; their tasks exist only once asked for.
    private ClosedSignal _readsClosed;
    private ClosedSignal _writesClosed;

    // Read side, under lock (this).
    private ReadState _readState;
    // The read waiting for data
    private StreamReadRequest? _waiter;
    // Reset: the peer's error code
    private ulong _peerResetCode;
    // ConnectionEnded: what reads throw once the buffer is drained
    private Exception? _connectionFailure;
    // Bytes consumed whose credit the core has not got back yet
    private long _unreportedCredit;
    // Bytes in _received whose credit went back on arrival (<= AdmittedBytes)
    private long _admitted;
    // A quarter of the stream's receive window (an int: with the other fields it keeps the object a size class smaller)
    private int _creditThreshold = 1;
    // A CreditReport is queued to the driver (they coalesce)
    private bool _creditReportPosted;
    // A read completed with data buffered has not taken its bytes yet (it copies them as its result is taken): a reset
    // arriving meanwhile leaves them to it, as they would be in its buffer had the driver copied them
    private bool _completedReadPending;

    // Write side: the state is written on the driver thread only (volatile: app threads read it to fail writes early
    // and to decide on staging); the rest is driver-thread only but for the application's requests.
    private volatile WriteState _writeState;
    // WriteRequests, app threads (Interlocked)
    private int _writeRequests;
    // The write request the driver is moving into the core
    private StreamWriteRequest? _pendingWrite;
    // StopSending: the peer's error code
    private ulong _peerStopSendingCode;

    // App threads: _disposed and _priorityBits from any (Interlocked), the rest from the one reader or the one writer
    // of the moment (the in-progress flags, Interlocked, make sure there is one).
    private int _disposed;
    // Urgency | (non-incremental ? 8 : 0).
    private int _priorityBits = QuicStreamPriority.DefaultUrgency;
    private int _readInProgress;
    private int _writeInProgress;
    // Reused for every read and write (one of each at a time): no allocation per operation. The read's goes once the
    // read side is over (app thread, while it holds the read). The stage has its own lock (see StreamWriteStage).
    private StreamReadRequest? _readRequest;
    private StreamWriteRequest? _writeRequest;
    private StreamWriteStage? _stage;
    // The one queued credit report, reused
    private CreditReport? _creditReport;

    /// <summary>
    /// How many buffered, unread bytes of a stream give their credit back on arrival: System.Net.Quic's receive buffer
    /// (64 KiB) takes them from msquic, which then extends the peer's window. A peer may so send a window plus this much
    /// (FIN included) to an application that has not read yet.
    /// </summary>
    public const int AdmittedBytes = 64 * 1024;

    public ManagedStream(ManagedConnection connection, long id, bool canRead, bool canWrite)
    {
        _connection = connection;
        Id = id;
        _canReadDirection = canRead;
        _canWriteDirection = canWrite;
        if (!canRead) _readState = ReadState.Finished;
        if (!canRead) _readsClosed.TrySetResult();
        if (!canWrite) _writesClosed.TrySetResult();
    }

    public override long Id { get; }

    /// <summary>The connection the stream belongs to.</summary>
    public ManagedConnection Connection => _connection;

    // From the ID (RFC 9000 §2.1), not a field.
    public override QuicStreamType Type => Streams.StreamId.IsUnidirectional(Id) ? QuicStreamType.Unidirectional : QuicStreamType.Bidirectional;

    public override bool CanRead => _canReadDirection && Volatile.Read(ref _disposed) == 0;

    public override bool CanWrite => _canWriteDirection && Volatile.Read(ref _disposed) == 0;

    public override Task ReadsClosed => _readsClosed.Task;

    public override Task WritesClosed => _writesClosed.Task;

    private Connection Core => _connection.Core!;

    private void Post(Action<object, long> action) => _connection.Host.Post(new DriverCall(action, this));

    /// <summary>
    /// Driver thread: the connection ended for this stream (or its open could not run); the core is not called for it
    /// any more. The connection's phase says it first (it ends before it tells its streams), the write side's state
    /// for a stream whose open never reached the core.
    /// </summary>
    private bool Ended => _writeState == WriteState.ConnectionEnded || _connection.IsEnded;

    /// <summary>Whether the write side is over: nothing more goes into the core and writes are not staged.</summary>
    private bool WriteSideOver => _writeState >= WriteState.StopSending;

    private bool HasWriteRequest(WriteRequests request) => (Volatile.Read(ref _writeRequests) & (int)request) != 0;

    /// <summary>Records an application request; false when it was already there.</summary>
    private bool AddWriteRequest(WriteRequests request) => (Interlocked.Or(ref _writeRequests, (int)request) & (int)request) == 0;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canReadDirection) throw new InvalidOperationException("Reading is not allowed on a unidirectional stream opened locally.");
        if (cancellationToken.IsCancellationRequested)
        {
            // As System.Net.Quic: a read side already over only throws; otherwise it is aborted (STOP_SENDING with
            // DefaultStreamErrorCode) as when a pending read is cancelled.
            if (!_readsClosed.IsCompleted) AbortRead((ulong)Math.Max(0, _connection.DefaultStreamErrorCode), disposing: false);
            return ValueTask.FromException<int>(new OperationCanceledException(cancellationToken)); // exactly this type, as msquic's
        }
        if (Interlocked.Exchange(ref _readInProgress, 1) != 0) throw new InvalidOperationException("A read is already in progress on this stream.");
        int n = ReadOrWait(buffer, cancellationToken, mayWait: true, out Exception? failure, out short waiting);
        if (n < 0) return new ValueTask<int>(_readRequest!, waiting);
        return failure is null ? new ValueTask<int>(n) : ValueTask.FromException<int>(failure);
    }

    /// <summary>
    /// App thread, as a waiting read's result is taken: the driver completed it once data was buffered
    /// (<see cref="StreamReadRequest.CompleteWithBufferedData"/>), and the copy into the application's buffer happens
    /// here, on the reader's thread, not on the driver's. Only this read drains the buffer, and a reset, an abort or
    /// the connection's end sets the state that fails it: the data the driver found is still here.
    /// </summary>
    public int ReadBufferedForCompletedRead(Memory<byte> buffer)
    {
        int n = ReadOrWait(buffer, default, mayWait: false, out Exception? failure, out _);
        if (failure is not null) throw failure;
        return n;
    }

    /// <summary>
    /// A read served from what is buffered (or its failure), the credit it frees reported in batches, the read side's
    /// end signalled. With nothing buffered: when <paramref name="mayWait"/>, the read becomes the stream's waiter and
    /// -1 is returned with the version of the waiting request in <paramref name="waiting"/> (the read stays in
    /// progress); otherwise it fails.
    /// </summary>
    private int ReadOrWait(Memory<byte> buffer, CancellationToken cancellationToken, bool mayWait, out Exception? failure, out short waiting)
    {
        waiting = 0;
        int n;
        bool finished;
        bool faultReads;
        bool report;
        lock (this)
        {
            if (!mayWait && _completedReadPending && _readState == ReadState.Reset && _received is { IsEmpty: false } kept)
            {
                // Reset after this read was completed with data: it takes its bytes (their credit went with the
                // reset); the rest goes, and the next read fails.
                _completedReadPending = false;
                n = kept.CopyTo(buffer.Span);
                DropReceived();
                failure = null;
                return n;
            }
            _completedReadPending = false;
            if (!TryReadNow(buffer.Span, out n, out failure, out finished, out faultReads))
            {
                if (mayWait)
                {
                    // Nothing buffered: wait for the driver (data, FIN, reset, the connection's end, or cancellation).
                    StreamReadRequest request = _readRequest ??= new StreamReadRequest(this);
                    request.Arm(buffer, cancellationToken);
                    _waiter = request;
                    request.RegisterCancellation();
                    if (TakeCreditReport(flush: true)) PostCreditReport();
                    waiting = request.Version;
                    return -1;
                }
                failure = QuicExceptionFactory.OperationAborted("Reading was aborted on this stream.");
            }
            // Credit goes back in batches of a quarter window (so the peer is never starved: the core advertises more
            // once half the window was consumed), all of it at the end, and before a read waits (see above).
            report = TakeCreditReport(flush: finished);
        }
        if (report) PostCreditReport();
        // A waiting read's result is still being taken: its GetResult ends the read in progress.
        if (mayWait) Volatile.Write(ref _readInProgress, 0);
        if (finished) _readsClosed.TrySetResult();
        if (faultReads) _readsClosed.TrySetException(failure!);
        return n;
    }

    /// <summary>
    /// Under the lock: a read served from what is buffered, or its failure (a reset, an abort, the connection's end
    /// once nothing is left); false when it has to wait.
    /// </summary>
    private bool TryReadNow(Span<byte> buffer, out int n, out Exception? failure, out bool finished, out bool faultReads)
    {
        n = 0;
        failure = null;
        finished = false;
        faultReads = false;
        if (_readState is ReadState.Aborted or ReadState.Reset)
        {
            failure = CreateReadFailure();
        }
        else if (_received is { IsEmpty: false } received)
        {
            // Buffered data: completes synchronously (a zero-byte read only learns that data is there).
            n = received.CopyTo(buffer);
            _unreportedCredit += ConsumedCredit(n);
            finished = received.IsEmpty && _readState == ReadState.FinReceived;
            if (finished) FinishReads();
        }
        else if (_readState is ReadState.FinReceived or ReadState.Finished)
        {
            finished = _readState == ReadState.FinReceived;
            FinishReads();
        }
        else if (_readState == ReadState.ConnectionEnded)
        {
            failure = _connectionFailure!;
            faultReads = true;
            DropReceived();
        }
        else
        {
            return false;
        }
        return true;
    }

    /// <summary>Under the lock: FinReceived (or Finished) -> Finished; the buffer and the reusable read go.</summary>
    private void FinishReads()
    {
        _readState = ReadState.Finished;
        DropReceived(); // gives the spare chunk back
        _readRequest = null; // no read waits any more: a stream still writing keeps none
    }

    /// <summary>Under the lock: nothing is buffered.</summary>
    private bool ReceivedIsEmpty => _received is null || _received.IsEmpty;

    /// <summary>Under the lock: the buffer's chunks go back to their pools and the buffer goes (the read side is over).</summary>
    private void DropReceived()
    {
        _received?.Clear();
        _received = null;
    }

    private Exception CreateReadFailure() => _readState == ReadState.Reset
        ? QuicExceptionFactory.StreamAborted(_peerResetCode, "reset the stream")
        : QuicExceptionFactory.OperationAborted("Reading was aborted on this stream.");

    /// <summary>
    /// Under the lock, after <paramref name="consumed"/> bytes left the buffer: the credit they give back (the part of
    /// them admitted on arrival already gave it).
    /// </summary>
    private long ConsumedCredit(int consumed)
    {
        long admitted = Math.Min(AdmittedBytes, _received?.Length ?? 0);
        long credit = consumed - (_admitted - admitted);
        _admitted = admitted;
        return credit;
    }

    /// <summary>Under the lock, after bytes arrived in the buffer: the credit of those now admitted (see <see cref="AdmittedBytes"/>).</summary>
    private long AdmitArrivals()
    {
        long admit = Math.Min(AdmittedBytes, _received?.Length ?? 0) - _admitted;
        if (admit <= 0) return 0;
        _admitted += admit;
        return admit;
    }

    /// <summary>
    /// Under the lock: whether the credit of the bytes consumed should be reported now (a quarter of the window
    /// consumed, or <paramref name="flush"/>); marks a report posted (at most one is in flight: they coalesce).
    /// </summary>
    private bool TakeCreditReport(bool flush)
    {
        if (_creditReportPosted || _unreportedCredit == 0 || _readState is ReadState.Aborted or ReadState.Reset) return false;
        if (!flush && _unreportedCredit < _creditThreshold) return false;
        _creditReportPosted = true;
        return true;
    }

    private void PostCreditReport() => _connection.Host.Post(_creditReport ??= new CreditReport(this));

    /// <summary>Driver thread: returns the credit of what the application consumed to the core (MAX_STREAM_DATA, MAX_DATA).</summary>
    private void ReportCredit()
    {
        long bytes;
        lock (this)
        {
            bytes = _unreportedCredit;
            _unreportedCredit = 0;
            _creditReportPosted = false;
        }
        // Nothing is left to report once reading was aborted or reset: both zero the count.
        if (bytes > 0 && !Ended) Core.ReleaseStreamCredit(Id, bytes);
    }

    /// <summary>The work item of a credit report (one per stream, reused).</summary>
    private sealed class CreditReport : Io.IDriverWorkItem
    {
        private readonly ManagedStream _stream;

        public CreditReport(ManagedStream stream) => _stream = stream;

        public void Execute(long nowUs) => _stream.ReportCredit();
    }

    /// <summary>
    /// Driver thread: data, FIN or a reset arrived. Everything readable moves from the core into the stream's buffer
    /// (whole chunks without a copy), keeping its flow-control credit until the application consumed it; a waiting read
    /// completes and copies the bytes on the reader's thread.
    /// </summary>
    public void OnReadable()
    {
        StreamReadRequest? completed = null;
        bool completeBuffered = false;
        bool reset = false;
        bool finished = false;
        ulong code = 0;
        long release;
        lock (this)
        {
            // Past Receiving nothing more comes from the core (once aborted, the core discards it when the abort reaches it).
            if (_readState != ReadState.Receiving) return;
            _creditThreshold = (int)Math.Clamp(Core.GetStreamReceiveWindow(Id) / 4, 1, int.MaxValue);
            release = _unreportedCredit; // reported here, on the way: no separate wake-up for it
            _unreportedCredit = 0;
            bool fin = false;
            // Whole chunks of the core's buffer come over without a copy; the reader copies them on its own thread.
            while (!fin && Core.TryTakeStreamChunk(Id, out byte[]? chunk, out int start, out int length, out fin))
            {
                (_received ??= new StreamReceiveQueue()).AppendTaken(chunk!, start, length);
            }
            // The bytes of a chunk still being filled are copied (and the FIN or a reset is learnt).
            while (!fin && !reset)
            {
                long readable = Core.GetReadableBytes(Id);
                Span<byte> space = readable > 0 ? (_received ??= new StreamReceiveQueue()).GetWriteSpan(readable) : Span<byte>.Empty;
                int n = Core.ReadStream(Id, space, holdCredit: true, out fin, out reset, out code);
                if (readable > 0) _received!.Advance(n);
                if (n == 0 || n >= readable) break;
            }
            if (reset)
            {
                _readState = ReadState.Reset;
                _peerResetCode = code;
                if (!_completedReadPending) DropReceived();
                _admitted = 0;
                release = 0; // the core released everything held
                if (_waiter is { } w)
                {
                    _waiter = null;
                    completed = w;
                }
            }
            else
            {
                if (fin) _readState = ReadState.FinReceived;
                if (_waiter is { } w && (!ReceivedIsEmpty || fin))
                {
                    // The read completes; it takes the bytes on its own thread as its result is taken. A zero-byte read
                    // only learns that data is there.
                    _waiter = null;
                    completed = w;
                    completeBuffered = !ReceivedIsEmpty && !w.Buffer.IsEmpty;
                    _completedReadPending = completeBuffered;
                }
                release += AdmitArrivals();
                // The end is known once everything was consumed, even if nobody reads now (ReadsClosed completes).
                if (fin && ReceivedIsEmpty)
                {
                    _readState = ReadState.Finished;
                    finished = true;
                    DropReceived(); // gives the spare chunk back
                }
            }
        }
        if (release > 0) Core.ReleaseStreamCredit(Id, release);
        if (reset)
        {
            Exception failure = QuicExceptionFactory.StreamAborted(code, "reset the stream");
            _readsClosed.TrySetException(failure);
            completed?.Fail(QuicExceptionFactory.StreamAborted(code, "reset the stream"));
            return;
        }
        if (finished) _readsClosed.TrySetResult();
        if (completeBuffered) completed!.CompleteWithBufferedData();
        else completed?.Complete(0);
    }

    /// <summary>Any thread: a pending read's token was cancelled; like System.Net.Quic, the read side is aborted.</summary>
    public void CancelRead(StreamReadRequest request, CancellationToken token)
    {
        lock (this)
        {
            if (_waiter != request) return; // completed meanwhile
            _waiter = null;
        }
        request.Fail(new OperationCanceledException(token));
        AbortRead((ulong)Math.Max(0, _connection.DefaultStreamErrorCode), disposing: false);
    }

    /// <summary>
    /// Any thread: the read side is aborted for the application at once (buffered data dropped, a waiting read fails
    /// with OperationAborted, or ObjectDisposedException when <paramref name="disposing"/>), then STOP_SENDING through
    /// the driver.
    /// </summary>
    private void AbortRead(ulong code, bool disposing)
    {
        StreamReadRequest? waiter;
        lock (this)
        {
            if (_readState is ReadState.Finished or ReadState.Aborted or ReadState.Reset) return;
            _readState = ReadState.Aborted;
            DropReceived();
            _admitted = 0;
            _unreportedCredit = 0; // STOP_SENDING releases everything held
            waiter = _waiter;
            _waiter = null;
        }
        waiter?.Fail(disposing ? new ObjectDisposedException(nameof(QuicStream)) : QuicExceptionFactory.OperationAborted("Reading was aborted on this stream."));
        _readsClosed.TrySetException(QuicExceptionFactory.OperationAborted("Reading was aborted on this stream."));
        if (_connection.Host.Driver.IsDriverThread) AbortReadOnDriver(code);
        else Post(static (state, _) => ((AbortCall)state).Stream.AbortReadOnDriver(((AbortCall)state).Code), new AbortCall(this, code));
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, bool completeWrites, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canWriteDirection) throw new InvalidOperationException("Writing is not allowed on a unidirectional stream opened by the peer.");
        if (cancellationToken.IsCancellationRequested)
        {
            // As System.Net.Quic: unless the write side is already over, it is aborted (RESET_STREAM with
            // DefaultStreamErrorCode) as when a pending write is cancelled.
            if (!_writesClosed.IsCompleted && !HasWriteRequest(WriteRequests.Abort)) AbortWrite((ulong)Math.Max(0, _connection.DefaultStreamErrorCode));
            return ValueTask.FromException(new OperationCanceledException(cancellationToken)); // exactly this type, as msquic's
        }
        if (_writeState == WriteState.Aborted || HasWriteRequest(WriteRequests.Abort)) return ValueTask.FromException(QuicExceptionFactory.OperationAborted("Writing was aborted on this stream."));
        if (HasWriteRequest(WriteRequests.Complete)) throw new InvalidOperationException("Writing is not allowed after the write side was completed.");
        if (buffer.IsEmpty && !completeWrites) return ValueTask.CompletedTask;
        if (Interlocked.Exchange(ref _writeInProgress, 1) != 0) throw new InvalidOperationException("A write is already in progress on this stream.");
        if (completeWrites) AddWriteRequest(WriteRequests.Complete);
        if (_connection.EndException is { } ended && _connection.Host.IsDisposed)
        {
            Volatile.Write(ref _writeInProgress, 0);
            return ValueTask.FromException(ended);
        }
        // A write side that is over takes the request path, which reports why.
        if (buffer.Length <= StreamWriteStage.Capacity && !WriteSideOver)
        {
            StreamWriteStage stage = _stage ??= new StreamWriteStage(this, _connection.StagedBytes);
            bool staged;
            bool post;
            lock (stage)
            {
                staged = stage.TryStage(buffer.Span, completeWrites, out post);
            }
            if (staged)
            {
                if (post) _connection.Host.Post(stage);
                Volatile.Write(ref _writeInProgress, 0);
                return ValueTask.CompletedTask;
            }
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
        return _writeState switch
        {
            WriteState.Aborted => QuicExceptionFactory.OperationAborted("Writing was aborted on this stream."),
            WriteState.StopSending => QuicExceptionFactory.StreamAborted(_peerStopSendingCode, "asked to stop sending (STOP_SENDING)"),
            WriteState.ConnectionEnded => _connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."),
            _ => null,
        };
    }

    /// <summary>Driver thread: moves as much of the pending write into the core as its send buffer takes.</summary>
    private void TryCompleteWrite()
    {
        if (!MoveStaged()) return;
        if (_pendingWrite is not { } request) return;
        CheckStopSending();
        if (WriteFailure() is { } failure)
        {
            FailWrite(failure);
            return;
        }
        bool fin = request.Fin || _writeState == WriteState.FinPending;
        int accepted = WriteCore(request.Remaining.Span, fin);
        if (accepted < 0)
        {
            FailWrite(WriteFailure() ?? QuicExceptionFactory.OperationAborted("The stream's write side is closed."));
            return;
        }
        request.Remaining = request.Remaining.Slice(accepted);
        if (!request.Remaining.IsEmpty) return;
        if (fin) _writeState = WriteState.FinSent;
        _pendingWrite = null;
        request.Complete();
    }

    /// <summary>Driver thread: the stage's posted work item runs: the staged bytes go into the core first (then a pending request's, if any).</summary>
    public void MoveStagedOnDriver() => TryCompleteWrite();

    /// <summary>
    /// Driver thread: moves staged bytes (and a staged FIN, or one asked for by CompleteWrites/Dispose with no request
    /// pending) into the core; true when nothing is left staged. Staged bytes of a write side that is gone are dropped.
    /// </summary>
    private bool MoveStaged()
    {
        if (_stage is not { } stage) return true;
        lock (stage)
        {
            stage.ClearPosted(); // the next staged write posts again (at worst one extra, harmless turn)
            if (stage.IsEmpty) return true;
            CheckStopSending();
            if (WriteSideOver)
            {
                stage.Drop();
                return true;
            }
            bool fin = stage.Fin || (_writeState == WriteState.FinPending && _pendingWrite is null);
            ReadOnlySpan<byte> pending = stage.Pending;
            int accepted = WriteCore(pending, fin);
            if (accepted < 0)
            {
                stage.Drop();
                return true;
            }
            bool all = accepted == pending.Length;
            stage.Consume(accepted, finTaken: all && stage.Fin);
            if (all && fin) _writeState = WriteState.FinSent;
            return all;
        }
    }

    /// <summary>Driver thread: the write side is over (see <see cref="WriteSideOver"/>); what is staged goes.</summary>
    private void DropStaged()
    {
        if (_stage is not { } stage) return;
        lock (stage)
        {
            stage.Drop();
        }
    }

    /// <summary>Driver thread: hands data to the core; -1 when the send side is gone (reset after STOP_SENDING, or finished).</summary>
    private int WriteCore(ReadOnlySpan<byte> data, bool fin)
    {
        CheckStopSending();
        if (WriteSideOver) return -1;
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

    /// <summary>Driver thread: an open write side (or one whose FIN is sent) learns of the peer's STOP_SENDING.</summary>
    private void CheckStopSending()
    {
        if (WriteSideOver) return;
        if (Core.GetStopSendingCode(Id) is { } code)
        {
            _peerStopSendingCode = code;
            _writeState = WriteState.StopSending;
            DropStaged();
            _writesClosed.TrySetException(QuicExceptionFactory.StreamAborted(code, "asked to stop sending (STOP_SENDING)"));
        }
    }

    /// <summary>Driver thread: send buffer space, flow credit, acknowledgments or STOP_SENDING.</summary>
    public void OnWritable()
    {
        if (Ended) return;
        TryCompleteWrite();
        CheckStopSending();
        if (_writeState == WriteState.FinSent && !_writesClosed.IsCompleted && Core.IsStreamWriteComplete(Id)) _writesClosed.TrySetResult();
        RemoveIfDone();
    }

    /// <summary>App thread: the read's result was taken; the next read may start.</summary>
    public void OnReadConsumed() => Volatile.Write(ref _readInProgress, 0);

    /// <summary>App thread: the write's result was taken; the next write may start.</summary>
    public void OnWriteConsumed() => Volatile.Write(ref _writeInProgress, 0);

    // Cancellation callbacks post the generation they belong to: by the time the driver runs them the request may be
    // serving a later operation, which they must not touch. (Allocates only when a token actually fires.)
    public void PostCancel(StreamWriteRequest request, short version)
        => _connection.Host.Post(new DriverCall(static (state, _) =>
        {
            var (stream, version) = ((ManagedStream, short))state;
            stream.CancelWrite(version);
        }, (this, version)));

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
        if (read) AbortRead((ulong)errorCode, disposing: false);
        if (write) AbortWrite((ulong)errorCode);
    }

    private void Post(Action<object, long> action, AbortCall call) => _connection.Host.Post(new DriverCall(action, call));

    /// <summary>Any thread: RESET_STREAM through the driver; the next WriteAsync fails at once.</summary>
    private void AbortWrite(ulong code)
    {
        AddWriteRequest(WriteRequests.Abort);
        if (_connection.Host.Driver.IsDriverThread) AbortWriteOnDriver(code);
        else Post(static (state, _) => ((AbortCall)state).Stream.AbortWriteOnDriver(((AbortCall)state).Code), new AbortCall(this, code));
    }

    private sealed record AbortCall(ManagedStream Stream, ulong Code);

    /// <summary>
    /// Driver thread: STOP_SENDING (RFC 9000 §3.5); the core sends it only while the peer may still be sending, and
    /// releases the credit of everything the application had buffered in any case.
    /// </summary>
    private void AbortReadOnDriver(ulong code)
    {
        if (!Ended) Core.StopSending(Id, code); // once: only the move to Aborted posts it
    }

    /// <summary>
    /// Driver thread: RESET_STREAM (RFC 9000 §3.1) unless everything was already sent and acknowledged (a send side
    /// already over in the core, or gone from it, takes no reset).
    /// </summary>
    private void AbortWriteOnDriver(ulong code)
    {
        if (_writeState is WriteState.Aborted or WriteState.ConnectionEnded) return;
        _writeState = WriteState.Aborted;
        DropStaged();
        if (!Ended && !Core.IsStreamWriteComplete(Id)) Core.ResetStream(Id, code);
        Exception aborted = QuicExceptionFactory.OperationAborted("Writing was aborted on this stream.");
        FailWrite(aborted);
        _writesClosed.TrySetException(aborted);
    }

    public override QuicStreamPriority Priority
    {
        get => UnpackPriority(Volatile.Read(ref _priorityBits));
        set
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
            int bits = value.Urgency | (value.Incremental ? 0 : 8);
            if (Interlocked.Exchange(ref _priorityBits, bits) == bits) return;
            // Ordered with writes: a priority set before a write applies to that write's data.
            if (_connection.Host.Driver.IsDriverThread) ApplyPriorityOnDriver();
            else Post(static (state, _) => ((ManagedStream)state).ApplyPriorityOnDriver());
        }
    }

    private static QuicStreamPriority UnpackPriority(int bits) => new(bits & 7, (bits & 8) == 0);

    /// <summary>Driver thread: hands the latest priority to the scheduler (several quick sets apply the last one).</summary>
    private void ApplyPriorityOnDriver()
    {
        if (Ended) return;
        QuicStreamPriority priority = UnpackPriority(Volatile.Read(ref _priorityBits));
        Core.SetStreamPriority(Id, priority.Urgency, priority.Incremental);
    }

    public override void CompleteWrites()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, typeof(QuicStream));
        if (!_canWriteDirection) return; // a peer's unidirectional stream has no write side to complete (msquic: no-op)
        if (_writeState == WriteState.Aborted || !AddWriteRequest(WriteRequests.Complete)) return;
        Post(static (state, _) => ((ManagedStream)state).WriteFinOnDriver());
    }

    /// <summary>
    /// Driver thread: an open write side's FIN goes now (FinSent), or with the last byte of the pending write or of the
    /// staged bytes (FinPending).
    /// </summary>
    private void WriteFinOnDriver()
    {
        if (_writeState is not (WriteState.Open or WriteState.FinPending)) return;
        if (_pendingWrite is not null || !MoveStaged())
        {
            _writeState = WriteState.FinPending;
            return;
        }
        if (_writeState == WriteState.FinSent) return; // the stage carried it
        WriteCore(ReadOnlySpan<byte>.Empty, fin: true);
        if (!WriteSideOver) _writeState = WriteState.FinSent;
    }

    /// <summary>The driver stopped before this write ran (its thread is gone: this runs on the poster's or the disposer's).</summary>
    public void OnWriteAbandoned(StreamWriteRequest request)
        => request.Fail(_connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."));

    /// <summary>
    /// Driver thread: the connection ended; every waiter learns why. A read side the application had not read to its
    /// end faults at once with <paramref name="exception"/> (ReadsClosed never waits for a read that may not come), as
    /// msquic's does unless the stream was over at the transport level; what was received stays readable all the same:
    /// reads drain the buffer, then return 0 after a FIN or throw <paramref name="exception"/> (msquic drops the
    /// buffer; see docs/DIFFERENCES.md).
    /// </summary>
    public void OnConnectionEnded(Exception exception)
    {
        if (_writeState == WriteState.ConnectionEnded) return;
        // A write side whose data and FIN were all acknowledged (the ACK may have come with the peer's CONNECTION_CLOSE)
        // completed; a STOP_SENDING that arrived with the close is reported as such.
        Connection? core = _connection.Core;
        if (core is not null) CheckStopSending();
        bool writeDone = _canWriteDirection && _writeState == WriteState.FinSent && core is not null && core.IsStreamWriteComplete(Id);
        if (!WriteSideOver) _writeState = WriteState.ConnectionEnded;
        DropStaged();
        StreamReadRequest? waiter;
        bool faultReads;
        lock (this)
        {
            _connectionFailure = exception;
            waiter = _waiter;
            _waiter = null;
            // As msquic: a stream over at the transport level before the close (the FIN received with no more buffered
            // than System.Net.Quic's buffer takes from msquic, and the write side done) ends normally once read.
            bool streamDone = _readState == ReadState.FinReceived && (_received?.Length ?? 0) <= AdmittedBytes && (!_canWriteDirection || writeDone || _writesClosed.IsCompleted);
            faultReads = _readState is (ReadState.Receiving or ReadState.ConnectionEnded) || (_readState == ReadState.FinReceived && !streamDone);
            if (_readState == ReadState.Receiving) _readState = ReadState.ConnectionEnded;
            if (ReceivedIsEmpty) DropReceived();
        }
        waiter?.Fail(exception);
        if (faultReads) _readsClosed.TrySetException(exception);
        FailWrite(exception);
        if (writeDone) _writesClosed.TrySetResult();
        else _writesClosed.TrySetException(exception);
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
        if (!_writesClosed.IsCompleted)
        {
            await Task.WhenAny(_writesClosed.Task, _connection.Lifetime).ConfigureAwait(false);
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
        if (_canReadDirection) AbortRead(code, disposing: true);
        if (!Ended)
        {
            if (_canWriteDirection && _writeState is (WriteState.Open or WriteState.FinPending or WriteState.FinSent))
            {
                if (_pendingWrite is not null) AbortWriteOnDriver(code);
                else WriteFinOnDriver(); // after any staged bytes: the stage drains as ACKs make room
            }
        }
        // The exceptions are created only when something is left to fail: a stream used to its end (the common case,
        // once per request) completes both tasks before disposal and allocates none.
        if (_pendingWrite is not null) FailWrite(new ObjectDisposedException(nameof(QuicStream)));
        if (!_readsClosed.IsCompleted) _readsClosed.TrySetException(QuicExceptionFactory.OperationAborted("The stream was disposed."));
        bool finQueued = _writeState == WriteState.FinPending && _stage is { IsEmpty: false };
        if (_writeState != WriteState.FinSent && !finQueued && !_writesClosed.IsCompleted) _writesClosed.TrySetException(QuicExceptionFactory.OperationAborted("The stream was disposed."));
        else if (!Ended) OnWritable(); // the FIN may be acknowledged already (or STOP_SENDING arrived)
        RemoveIfDone();
    }

    /// <summary>Driver thread: a disposed stream leaves the connection's table once its write side is closed.</summary>
    private void RemoveIfDone()
    {
        if (Volatile.Read(ref _disposed) != 0 && _writesClosed.IsCompleted) _connection.RemoveStream(Id);
    }

    public override string ToString() => $"QuicStream {Id} ({Type})";
}
