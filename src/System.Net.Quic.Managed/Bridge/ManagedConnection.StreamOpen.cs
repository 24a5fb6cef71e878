using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// Opening outbound streams. Once the handshake is done and the peer's stream limit (RFC 9000 §4.6) has room, a stream
/// opens on the caller's thread: the core's stream table says which ID it will get (<see cref="Streams.StreamTable.PeekLocalStreamId"/>),
/// and the driver opens it in the core when the posted open runs, before anything the application does with the stream
/// next (the driver's work queue is first in, first out). Otherwise the open goes to the driver and waits there for the
/// peer's limit. A request/response client thus pays no driver turn and no thread-pool hop per stream to learn an ID.
/// </summary>
/// <remarks>
/// The core's stream table is the one owner of stream IDs; this side only counts opens under way. Order is what keeps
/// the IDs right: the core hands out IDs in the order its opens run, so every core open, and every look at the ID the
/// next one gets, happens under <see cref="_openLock"/>; a stream opens on the caller's thread only while no
/// driver-side open of its type is outstanding (those take their IDs when they run, and may be waiting for the limit).
/// </remarks>
internal sealed partial class ManagedConnection
{
    // Driver thread only: opens waiting for the peer's limit, in order.
    private readonly Queue<OpenStreamRequest> _pendingOpens = new();

    // Guarded by _openLock (index 0 bidirectional, 1 unidirectional): streams opened on callers' threads whose core
    // open has not run yet (each is the core's next ID in turn), and opens posted to the driver that have not opened or
    // failed yet. Every core open of a local stream runs under the lock too.
    private readonly Lock _openLock = new();
    private readonly int[] _openingOnCaller = new int[2];
    private readonly int[] _openingOnDriver = new int[2];

    public override ValueTask<QuicStream> OpenOutboundStreamAsync(QuicStreamType type, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, Owner);
        if (_endException is { } ended) return ValueTask.FromException<QuicStream>(ended);
        bool unidirectional = type == QuicStreamType.Unidirectional;
        int kind = unidirectional ? 1 : 0;
        if (!cancellationToken.IsCancellationRequested)
        {
            ManagedStream? opened = null;
            lock (_openLock)
            {
                // Connected (read once, volatile) makes _core visible; the ID is -1 when the peer's limit has no room.
                long id = _phase == Phase.Connected && _openingOnDriver[kind] == 0 && _endException is null
                    ? _core!.Streams.PeekLocalStreamId(unidirectional, ahead: _openingOnCaller[kind])
                    : -1;
                if (id >= 0)
                {
                    _openingOnCaller[kind]++;
                    opened = new ManagedStream(this, id, canRead: !unidirectional, canWrite: true);
                    // Posted inside the lock: a later open of this type is queued after this one.
                    _host.Post(new DriverCall(
                        static (state, _) => ((ManagedStream)state).Connection.RegisterOpenedOnDriver((ManagedStream)state),
                        opened,
                        static state => ((ManagedStream)state).OnConnectionEnded(QuicExceptionFactory.OperationAborted("The connection was closed."))));
                }
                else
                {
                    _openingOnDriver[kind]++;
                }
            }
            if (opened is not null) return new ValueTask<QuicStream>(new QuicStream(opened));
        }
        else
        {
            lock (_openLock) _openingOnDriver[kind]++;
        }
        var request = new OpenStreamRequest(this, type, cancellationToken);
        _host.Post(request);
        return new ValueTask<QuicStream>(request.Task);
    }

    /// <summary>
    /// Driver thread: a stream opened on the caller's thread takes its place in the core (the next ID of its type, the one
    /// it was given) and starts receiving events. If the connection began closing meanwhile, it ends as the open would have.
    /// </summary>
    private void RegisterOpenedOnDriver(ManagedStream stream)
    {
        bool unidirectional = stream.Type == QuicStreamType.Unidirectional;
        bool ended = IsEnded;
        bool opened;
        long id = -1;
        lock (_openLock)
        {
            opened = !ended && _core!.TryOpenStream(unidirectional, out id);
            _openingOnCaller[unidirectional ? 1 : 0]--;
        }
        if (ended)
        {
            stream.OnConnectionEnded(_endException!);
            return;
        }
        if (!opened)
        {
            // Only a close started since (the limit was checked): the stream never existed on the wire.
            stream.OnConnectionEnded(QuicExceptionFactory.ForConnection(_core!.Error));
            return;
        }
        if (id != stream.Id)
        {
            // Cannot happen while every core open and every peek at the next ID go through _openLock in order; if it
            // did, data would go to the wrong stream.
            throw new InvalidOperationException($"Stream {stream.Id} was opened as {id}.");
        }
        _streams[id] = stream;
    }

    /// <summary>Driver thread: open now, or queue until the peer raises its limit.</summary>
    public void StartOpen(OpenStreamRequest request)
    {
        if (request.Task.IsCompleted)
        {
            OpenLeftDriver(request);
            return;
        }
        if (IsEnded)
        {
            request.Fail(OpenFailure(_endException!));
            OpenLeftDriver(request);
            return;
        }
        if (_pendingOpens.Count > 0 || !TryOpen(request)) _pendingOpens.Enqueue(request);
    }

    /// <summary>As System.Net.Quic: an open pending when the app disposed the connection fails with ObjectDisposedException.</summary>
    private Exception OpenFailure(Exception ended)
        => Volatile.Read(ref _disposed) != 0 ? new ObjectDisposedException(nameof(QuicConnection)) : ended;

    private void FailPendingOpens(Exception exception)
    {
        while (_pendingOpens.TryDequeue(out OpenStreamRequest? open))
        {
            open.Fail(OpenFailure(exception));
            OpenLeftDriver(open);
        }
    }

    private void RetryOpens()
    {
        while (_pendingOpens.TryPeek(out OpenStreamRequest? request))
        {
            if (!request.Task.IsCompleted && !TryOpen(request)) return;
            _pendingOpens.Dequeue();
            if (request.Task.IsCompleted && !request.Opened) OpenLeftDriver(request); // cancelled while waiting
        }
    }

    private bool TryOpen(OpenStreamRequest request)
    {
        bool unidirectional = request.Type == QuicStreamType.Unidirectional;
        long id;
        lock (_openLock)
        {
            if (!_core!.TryOpenStream(unidirectional, out id)) return false;
        }
        request.Opened = true;
        OpenLeftDriver(request);
        var stream = new ManagedStream(this, id, canRead: !unidirectional, canWrite: true);
        _streams[id] = stream;
        if (!request.Complete(new QuicStream(stream)))
        {
            // Cancelled meanwhile: the stream exists at the transport level, so end it politely.
            stream.AbandonOnDriver();
        }
        return true;
    }

    /// <summary>
    /// Driver thread: the increase of the peer's limit of stream type <paramref name="kind"/> (<paramref name="streams"/>
    /// holds it and the streams opened so far) to report to StreamCapacityCallback (raising <paramref name="reported"/>),
    /// 0 while no stream is available beyond the opened ones and the opens still under way or waiting (a cancelled open
    /// waits no more: it gives its place back).
    /// </summary>
    private int StreamCapacityIncrement(Streams.LocalStreamLimit streams, ref long reported, int kind)
    {
        long limit = streams.MaxStreams;
        if (limit <= reported) return 0;
        long used;
        lock (_openLock) used = streams.OpenedCount + _openingOnCaller[kind] + _openingOnDriver[kind];
        foreach (OpenStreamRequest waiting in _pendingOpens)
        {
            if ((waiting.Type == QuicStreamType.Unidirectional ? 1 : 0) == kind && waiting.Task.IsCompleted && !waiting.Opened) used--;
        }
        if (limit <= used) return 0;
        int increment = (int)Math.Min(int.MaxValue, limit - reported);
        reported = limit;
        return increment;
    }

    /// <summary>Driver thread: a driver-side open is over (opened, failed or cancelled): opens may go on the caller's thread again.</summary>
    private void OpenLeftDriver(OpenStreamRequest request)
    {
        lock (_openLock) _openingOnDriver[request.Type == QuicStreamType.Unidirectional ? 1 : 0]--;
    }
}
