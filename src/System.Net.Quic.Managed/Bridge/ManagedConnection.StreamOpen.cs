using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// Opening outbound streams. Once the handshake is done and the peer's stream limit (RFC 9000 §4.6) has room, a stream
/// opens on the caller's thread: its ID is the next one of its type, known without asking the core, and the driver
/// registers it when the posted open runs, before anything the application does with the stream next (the driver's
/// work queue is first in, first out). Otherwise the open goes to the driver and waits there for the peer's limit.
/// A request/response client thus pays no driver turn and no thread-pool hop per stream to learn an ID.
/// </summary>
/// <remarks>
/// Order is what keeps the IDs right: the core hands out IDs in the order its opens run, so every open of a type goes
/// through <see cref="_openLock"/>, and a stream opens on the caller's thread only while no driver-side open of its
/// type is outstanding (those take their IDs when they run, and may be waiting for the limit).
/// </remarks>
internal sealed partial class ManagedConnection
{
    // Driver thread only: opens waiting for the peer's limit, in order.
    private readonly Queue<OpenStreamRequest> _pendingOpens = new();

    // Guarded by _openLock (index 0 bidirectional, 1 unidirectional): streams opened or reserved so far, and opens
    // posted to the driver that have not opened or failed yet.
    private readonly Lock _openLock = new();
    private readonly long[] _opened = new long[2];
    private readonly int[] _openingOnDriver = new int[2];

    // Written on the driver thread once the handshake is done, read under _openLock: the peer's stream limits (counts).
    private long _peerBidiLimit;
    private long _peerUniLimit;

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
                long limit = Volatile.Read(ref unidirectional ? ref _peerUniLimit : ref _peerBidiLimit);
                if (_openingOnDriver[kind] == 0 && _opened[kind] < limit && _endException is null)
                {
                    // RFC 9000 §2.1: the two low bits of an ID are the initiator (server = 1) and the direction (uni = 2).
                    long id = (_opened[kind] << 2) | (unidirectional ? 2L : 0L) | (_core!.IsServer ? 1L : 0L);
                    _opened[kind]++;
                    opened = new ManagedStream(this, id, type, canRead: !unidirectional, canWrite: true);
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

    /// <summary>Driver thread, handshake done: the peer's stream limits (counts of streams) as the core knows them.</summary>
    private void PublishOpenLimits(long bidi, long uni)
    {
        if (!_handshakeDone) return;
        Volatile.Write(ref _peerBidiLimit, bidi);
        Volatile.Write(ref _peerUniLimit, uni);
    }

    /// <summary>
    /// Driver thread: a stream opened on the caller's thread takes its place in the core (the next ID of its type, the one
    /// it was given) and starts receiving events. If the connection began closing meanwhile, it ends as the open would have.
    /// </summary>
    private void RegisterOpenedOnDriver(ManagedStream stream)
    {
        if (_ended)
        {
            stream.OnConnectionEnded(_endException!);
            return;
        }
        bool unidirectional = stream.Type == QuicStreamType.Unidirectional;
        if (!_core!.TryOpenStream(unidirectional, out long id))
        {
            // Only a close started since (the limit was checked): the stream never existed on the wire.
            stream.OnConnectionEnded(QuicExceptionFactory.ForConnection(_core.Error));
            return;
        }
        if (id != stream.Id)
        {
            // Cannot happen while every open goes through _openLock in order; if it did, data would go to the wrong stream.
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
        if (_ended)
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
        if (!_core!.TryOpenStream(unidirectional, out long id)) return false;
        lock (_openLock) _opened[unidirectional ? 1 : 0]++;
        request.Opened = true;
        OpenLeftDriver(request);
        var stream = new ManagedStream(this, id, request.Type, canRead: !unidirectional, canWrite: true);
        _streams[id] = stream;
        if (!request.Complete(new QuicStream(stream)))
        {
            // Cancelled meanwhile: the stream exists at the transport level, so end it politely.
            stream.AbandonOnDriver();
        }
        return true;
    }

    /// <summary>
    /// Driver thread: the increase of the peer's limit <paramref name="limit"/> of stream type <paramref name="kind"/> to
    /// report to StreamCapacityCallback (raising <paramref name="reported"/>), 0 while no stream is available beyond the
    /// opened ones and the opens still waiting (a cancelled open waits no more: it gives its place back).
    /// </summary>
    private int StreamCapacityIncrement(long limit, ref long reported, int kind)
    {
        if (limit <= reported) return 0;
        long used;
        lock (_openLock) used = _opened[kind] + _openingOnDriver[kind];
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
