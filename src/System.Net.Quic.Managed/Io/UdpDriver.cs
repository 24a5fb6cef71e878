using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Sockets;
using System.Threading;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// Owns one UDP socket and the one thread that drives a sans-IO <see cref="IDatagramEndpoint"/>: it receives
/// datagrams, runs the endpoint's timers, flushes what the endpoint wants to send (with GSO where the kernel
/// has it), and runs work posted by the application. All calls into the core happen on this thread.
/// Waking the thread while it waits on the socket uses a zero-length datagram sent to the socket itself
/// (QUIC never sends empty datagrams), which works on every OS without native calls.
/// </summary>
internal sealed class UdpDriver : IDisposable, IDeadlineItem
{
    /// <summary>Datagrams taken per wake-up before timers, sends and posted work get a turn (a receive call in progress is always finished).</summary>
    private const int MaxDatagramsPerReceiveBatch = 128;

    /// <summary>During a long burst, flush (ACKs mostly) after this many datagrams.</summary>
    private const int FlushEveryDatagrams = 16;
    private const int SendBufferSize = 65_000;

    private readonly Socket _socket;
    private readonly IDatagramEndpoint _endpoint;
    private readonly SocketAddressCodec _addresses;
    private readonly UdpSegmentation _segmentation;
    private readonly UdpPathSignals _pathSignals;
    private readonly ConcurrentQueue<IDriverWorkItem> _work = new();
    private UdpReceiver _receiver;
    // The send buffer belongs to the thread running the loop (only Flush, on that thread, touches it): a pooled
    // DriverThreadPool thread keeps one for every socket it drives instead of 64 KB allocated per client connection.
    [ThreadStatic]
    private static byte[]? t_sendBuffer;
    private byte[] _sendBuffer = [];
    private readonly string _threadName;
    private readonly ManualResetEventSlim _loopExited = new(false);
    private Thread? _loopThread;
    private readonly Socket? _wakeSocket;
    private readonly SocketAddress? _wakeTarget;

    // Set when the driver is one of several on a shared loop thread (client connections): the loop then owns the
    // thread, the wake-up and the wait, and this driver only its socket, endpoint and work queue.
    private readonly UdpDriverLoop? _loop;
    private int _stepRequested;

    // With the native poll the driver waits on its socket and an eventfd. On the portable path a connected socket (a
    // client that wants ICMP errors) drops datagrams from any other source, the wake-up datagram included: it then gets
    // a separate loopback socket to wake on, and the loop waits on both; an unconnected one is woken through its own port.
    private readonly WakeSignal? _wake;
    private readonly List<Socket> _selectList = new(2);
    private readonly List<Socket> _errorList = new(1);
    private int _sleeping;
    private volatile bool _stopping;
    private volatile bool _abandoning;
    private int _disposed;
    private int _started;

    /// <summary>
    /// A driver for <paramref name="socket"/> (bound) and <paramref name="endpoint"/>. <paramref name="enableSegmentation"/>
    /// and <paramref name="enableBatching"/> false force datagram-by-datagram sends and the portable receive path (see
    /// <see cref="UdpReceiver.DisableBatchingSwitch"/>); <paramref name="name"/> names the thread. <paramref name="sharedPort"/>:
    /// the socket is one of an SO_REUSEPORT group, where a wake-up datagram sent to the port could reach another socket of the
    /// group, so the driver wakes on a loopback socket of its own (as a connected socket does).
    /// </summary>
    public UdpDriver(Socket socket, IDatagramEndpoint endpoint, bool enableSegmentation = true, string? name = null, bool enableBatching = true,
        bool sharedPort = false, UdpDriverLoop? loop = null)
    {
        _loop = loop;
        _socket = socket;
        _endpoint = endpoint;
        _addresses = new SocketAddressCodec(socket.AddressFamily);
        _segmentation = new UdpSegmentation(socket, enableSegmentation);
        _pathSignals = new UdpPathSignals(socket);
        _receiver = UdpReceiver.Create(socket, enableBatching);
        LocalEndPoint = (IPEndPoint)socket.LocalEndPoint!;

        IPAddress wakeAddress = LocalEndPoint.Address switch
        {
            var a when a.Equals(IPAddress.Any) => IPAddress.Loopback,
            var a when a.Equals(IPAddress.IPv6Any) => IPAddress.IPv6Loopback,
            var a => a,
        };
        if (loop is not null)
        {
            // The loop's own wake-up serves every driver on it.
        }
        else if (_receiver.IsBatched || socket.Connected || sharedPort)
        {
            _wake = WakeSignal.Create(nativePoll: _receiver.IsBatched);
        }
        else
        {
            _wakeSocket = new Socket(wakeAddress.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
            _wakeTarget = new IPEndPoint(wakeAddress, LocalEndPoint.Port).Serialize();
        }
        _threadName = name ?? $"QuicManaged UDP {LocalEndPoint}";
    }

    public IPEndPoint LocalEndPoint { get; }

    /// <summary>True when sends go out with UDP GSO.</summary>
    public bool SegmentationEnabled => _segmentation.IsEnabled;

    /// <summary>Called on the driver thread when the socket reports an ICMP error (e.g. port unreachable on a connected socket).</summary>
    public Action<SocketError>? SocketErrorHandler { get; set; }

    /// <summary>True when receives use recvmmsg (Linux); false on the portable Socket path.</summary>
    public bool BatchedReceive => _receiver.IsBatched;

    /// <summary>True when the kernel may coalesce received datagrams (UDP_GRO), which the driver splits again.</summary>
    public bool CoalescedReceive => _receiver.IsCoalescing;

    /// <summary>The largest datagram the socket's receive path takes whole (<see cref="UdpReceiver.MaxDatagramSize"/>).</summary>
    public int MaxReceivableDatagram => _receiver.MaxDatagramSize;

    /// <summary>Counters for diagnostics and tests.</summary>
    public long DatagramsReceived { get; private set; }

    /// <summary>Receive calls that returned data, and the messages they returned (a coalesced message holds several datagrams).</summary>
    public long ReceiveCalls { get; private set; }

    public long MessagesReceived { get; private set; }

    /// <summary>Messages dropped on receive: truncated (larger than the receive buffer) or from an address family QUIC does not use.</summary>
    public long MessagesDropped { get; private set; }

    public long DatagramsSent { get; private set; }

    public long SendCalls { get; private set; }

    /// <summary>Loop turns that found a timer already due after running timers (a core timer that does not advance spins here).</summary>
    public long ZeroWaitSteps { get; private set; }

    /// <summary>
    /// Runs on the driver thread after every step (work, timers, receive, flush): the API layer drains connection
    /// events here. The driver flushes again afterwards, so core calls made by the hook go out without delay.
    /// Set before <see cref="Start"/>.
    /// </summary>
    public Action? StepCompleted { get; set; }

    public void Start()
    {
        Volatile.Write(ref _started, 1);
        if (_loop is not null) _loop.Attach(this);
        else DriverThreadPool.Run(Run, _threadName);
    }

    /// <summary>The shared loop this driver runs on, or null when it has a thread of its own.</summary>
    public UdpDriverLoop? Loop => _loop;

    /// <summary>True while the driver thread runs (tests check that disposal leaves none behind).</summary>
    public bool IsRunning => Volatile.Read(ref _started) == 1 && !_loopExited.IsSet;

    /// <summary>Exceptions escaping posted work or <see cref="StepCompleted"/> (a bug): counted, kept, reported, never fatal.</summary>
    public int UnhandledCount { get; private set; }

    public Exception? LastUnhandled { get; private set; }

    /// <summary>Called on the driver thread with each such exception.</summary>
    public Action<Exception>? UnhandledException { get; set; }

    private void OnUnhandled(Exception e)
    {
        UnhandledCount++;
        LastUnhandled = e;
        try
        {
            UnhandledException?.Invoke(e);
        }
        catch
        {
            // The reporter itself failed: nothing more to do.
        }
    }

    /// <summary>True on the driver's own thread: code there may call the core directly.</summary>
    public bool IsDriverThread => Volatile.Read(ref _loopThread) == Thread.CurrentThread;

    /// <summary>Queues work for the driver thread and wakes it.</summary>
    public void Post(IDriverWorkItem item)
    {
        _work.Enqueue(item);
        if (_abandoning) AbandonWork(); // the loop is gone: nothing will run it
        else Wake();
    }

    /// <summary>After the loop ended: every queued item is told it will not run (each exactly once).</summary>
    private void AbandonWork()
    {
        while (_work.TryDequeue(out IDriverWorkItem? item))
        {
            try
            {
                item.Abandon();
            }
            catch (Exception e)
            {
                OnUnhandled(e);
            }
        }
    }

    /// <summary>Makes the driver re-evaluate its timers and send queue soon (e.g. after the app wrote data).</summary>
    public void Wake()
    {
        if (_loop is not null)
        {
            RequestStep();
            return;
        }
        if (Interlocked.Exchange(ref _sleeping, 0) == 1 && !_stopping) SignalWake();
    }

    /// <summary>Wakes the driver thread from its wait: the wake signal, or an empty datagram to the driver's own socket.</summary>
    private void SignalWake()
    {
        if (_wake is not null)
        {
            _wake.Signal();
            return;
        }
        try
        {
            _wakeSocket!.SendTo(ReadOnlySpan<byte>.Empty, SocketFlags.None, _wakeTarget!);
        }
        catch (SocketException)
        {
            // The loop also wakes on its own timer; a lost wake only adds latency.
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private void Run()
    {
        Volatile.Write(ref _loopThread, Thread.CurrentThread);
        _sendBuffer = t_sendBuffer ??= new byte[SendBufferSize];
        try
        {
            RunLoop();
        }
        finally
        {
            // Only this thread ever receives: once it ends, the receive buffers can go back to the pool.
            _receiver.Release();
            // The thread goes back to DriverThreadPool and may drive another socket next: it is no longer ours.
            Volatile.Write(ref _loopThread, null);
            _loopExited.Set();
        }
    }

    private void RunLoop()
    {
        while (!_stopping)
        {
            Step(MonotonicClock.NowUs);

            // A full fence, not a release store: the flag must be visible before the queue is looked at (Post enqueues,
            // then reads the flag). With a plain store x86 may order the queue read first; a Post in between then sees
            // the driver awake and sends no wake-up, and the work waits for the next timer (the idle timeout when
            // nothing is in flight).
            Interlocked.Exchange(ref _sleeping, 1);
            if (!_work.IsEmpty || _stopping || _endpoint.HasPendingWork)
            {
                Volatile.Write(ref _sleeping, 0);
                continue;
            }
            long deadline = _endpoint.NextTimeoutUs;
            long now = MonotonicClock.NowUs;
            int waitUs = deadline == long.MaxValue ? -1 : (int)Math.Clamp(deadline - now, 0, int.MaxValue);
            bool readable;
            try
            {
                // A timer already due must not starve the socket: look for datagrams without waiting then.
                if (waitUs == 0) ZeroWaitSteps++;
                readable = _wake is null || waitUs == 0 ? _socket.Poll(waitUs, SelectMode.SelectRead) : WaitConnected(waitUs);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                break;
            }
            Volatile.Write(ref _sleeping, 0);
            if (readable) ReceiveBatch();
        }
    }

    /// <summary>
    /// One turn of the driver: posted work, due timers, a flush, then <see cref="StepCompleted"/> and another flush, again
    /// while that left the endpoint work (events of what the flush serviced; a bounded number of rounds, after which the
    /// loop steps again before it sleeps). On the driver's thread (its own or its loop's).
    /// </summary>
    internal void Step(long now)
    {
        RunWork(now);
        try
        {
            _endpoint.OnTimeout(now); // runs only what is due: one scan of the connections instead of two (a minimum first)
            Flush(now);
        }
        catch (Exception e) when (e is not (SocketException or ObjectDisposedException))
        {
            // The core does not throw on peer input; should a bug make it throw anyway, this thread (which serves
            // every connection on the socket) must survive it: report it and keep running.
            OnUnhandled(e);
        }
        if (StepCompleted is not { } step) return;
        for (int round = 0; round < MaxCompletionRounds; round++)
        {
            try
            {
                step();
            }
            catch (Exception e)
            {
                OnUnhandled(e);
            }
            try
            {
                Flush(now);
            }
            catch (Exception e) when (e is not (SocketException or ObjectDisposedException))
            {
                OnUnhandled(e);
            }
            if (!_endpoint.HasPendingWork) break;
        }
    }

    /// <summary>The socket a shared loop waits on.</summary>
    internal Socket Socket => _socket;

    /// <summary>True once <see cref="Dispose"/> began: a shared loop no longer steps or receives for it.</summary>
    internal bool IsStopping => _stopping;

    /// <summary>When the endpoint's next timer is due (microseconds, <see cref="long.MaxValue"/> for none).</summary>
    internal long NextDeadline => _endpoint.NextTimeoutUs;

    /// <summary>
    /// Any thread, loop drivers: asks the loop for a step of this driver. The first request since the last step puts the
    /// driver in the loop's queue; later ones find it there.
    /// </summary>
    internal void RequestStep()
    {
        if (Interlocked.Exchange(ref _stepRequested, 1) == 0) _loop!.Request(this);
    }

    /// <summary>
    /// Loop thread: clears the request before a step (a request made during the step queues the driver again). A full
    /// fence, not a release store: the cleared flag must be visible before the step looks at the work queue (Post
    /// enqueues, then reads the flag in <see cref="RequestStep"/>). With a plain store the queue may be read first; a Post
    /// in between then finds the flag still set and queues no request, and unless the leftover-work check after the step
    /// sees the item, it waits for the driver's next step: the idle timeout when nothing else happens on the connection.
    /// </summary>
    internal void ClearStepRequest() => Interlocked.Exchange(ref _stepRequested, 0);

    /// <summary>Loop thread, after a step: work the step left (posted meanwhile, or more than its rounds took).</summary>
    internal bool HasLeftoverWork => !_work.IsEmpty || _endpoint.HasPendingWork;

    /// <summary>Loop thread: the deadline this driver has in its loop's timer heap (long.MaxValue: none).</summary>
    public long ScheduledUs { get; set; } = long.MaxValue;

    bool IDeadlineItem.IsScheduledHere => Attached;

    /// <summary>Loop thread: between the loop's attach and detach of this driver.</summary>
    internal bool Attached;

    /// <summary>Loop thread: position in the loop's driver list while attached.</summary>
    internal int LoopIndex;

    /// <summary>One of several sockets (local paths) of one connection's endpoint.</summary>
    internal bool IsLocalPath => _endpoint is LocalPathEndpoint;

    /// <summary>The endpoint behind this driver's (several drivers of one connection's local paths share one).</summary>
    internal object EndpointKey => _endpoint is LocalPathEndpoint path ? path.Inner : _endpoint;

    /// <summary>Rounds of <see cref="StepCompleted"/> and flush in one step (the first almost always leaves nothing).</summary>
    private const int MaxCompletionRounds = 4;

    /// <summary>Loop thread: the socket is readable; take what is queued and step the driver next.</summary>
    internal void ReceiveReady()
    {
        ReceiveBatch();
        RequestStep();
    }

    /// <summary>Loop thread: the driver joined <paramref name="thread"/>'s loop.</summary>
    internal void OnAttached(Thread thread)
    {
        _sendBuffer = t_sendBuffer ??= new byte[SendBufferSize];
        Volatile.Write(ref _loopThread, thread);
        // Requests made before the driver joined found no loop to step it: one now, whatever they left behind.
        Volatile.Write(ref _stepRequested, 0);
        RequestStep();
    }

    /// <summary>
    /// Loop thread: the driver left its loop (after <see cref="Dispose"/>): the loop no longer waits on the socket, so
    /// the socket closes here, buffers go back to the pool and work still queued is abandoned.
    /// </summary>
    internal void OnDetached()
    {
        Volatile.Write(ref _loopThread, null);
        ReleaseLoopDriver();
        _loopExited.Set();
    }

    /// <summary>A loop driver that no loop waits on any more: buffers back to the pool, socket closed, queued work abandoned.</summary>
    private void ReleaseLoopDriver()
    {
        _receiver.Release();
        _socket.Dispose();
        _abandoning = true;
        AbandonWork();
    }

    private bool WaitConnected(int waitUs)
    {
        bool readable;
        bool wake;
        if (_wake!.IsEventFd || _receiver.IsBatched)
        {
            // Linux: one ppoll(2) on the socket and the wake-up descriptor (see WakeSignal.PollTimeoutUs).
            if (!LinuxUdpInterop.WaitReadable(_socket.SafeHandle, _wake!.Handle, WakeSignal.PollTimeoutUs(waitUs), out readable, out wake))
            {
                throw new SocketException((int)SocketError.SocketError);
            }
        }
        else
        {
            _selectList.Clear();
            _selectList.Add(_socket);
            _selectList.Add(_wake!.Socket!);
            // A pending ICMP error (POLLERR) does not make the socket readable to Select: ask for errors too, then the
            // receive below fetches the error (ECONNREFUSED) and hands it to SocketErrorHandler.
            _errorList.Clear();
            _errorList.Add(_socket);
            Socket.Select(_selectList, null, _errorList, waitUs);
            readable = _errorList.Count > 0;
            wake = false;
            foreach (Socket ready in _selectList)
            {
                if (ready == _socket) readable = true;
                else wake = true;
            }
        }
        if (wake) _wake!.Drain(); // non-blocking: every queued wake-up, without an exception or a size query
        return readable;
    }

    private void RunWork(long now)
    {
        while (_work.TryDequeue(out IDriverWorkItem? item))
        {
            try
            {
                item.Execute(now);
            }
            catch (Exception e)
            {
                // One failing operation must not kill the thread every connection of this socket depends on.
                OnUnhandled(e);
            }
        }
    }

    private void ReceiveBatch()
    {
        int datagrams = 0;
        int sinceFlush = 0;
        bool knownReadable = true;
        // Bounded in calls too: a socket that keeps reporting errors must not hold the thread.
        for (int calls = 0; calls < MaxDatagramsPerReceiveBatch && datagrams < MaxDatagramsPerReceiveBatch && !_stopping; calls++)
        {
            int count;
            SocketError error;
            try
            {
                count = _receiver.Receive(knownReadable, out error);
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            knownReadable = false;
            if (error != SocketError.Success)
            {
                if (error == SocketError.OperationNotSupported && _receiver is RecvMmsgUdpReceiver batched)
                {
                    // recvmmsg refused at run time (a seccomp filter, say): continue on the portable path for good.
                    batched.StopCoalescing();
                    batched.Release();
                    _receiver = new SocketUdpReceiver(_socket);
                    continue;
                }
                SocketErrorHandler?.Invoke(error);
                continue;
            }
            if (count == 0) break;
            ReceiveCalls++;
            for (int m = 0; m < count; m++)
            {
                if (!_receiver.TryGetMessage(m, out Span<byte> data, out NetworkAddress remote, out int segment, out byte ecn))
                {
                    MessagesDropped++;
                    continue;
                }
                if (data.IsEmpty) continue; // a wake-up, or an empty datagram that cannot be QUIC
                MessagesReceived++;
                long now = MonotonicClock.NowUs;
                if (segment <= 0) segment = data.Length;
                // UDP_GRO: the message holds datagrams of `segment` bytes back to back, the last one possibly shorter.
                for (int offset = 0; offset < data.Length; offset += segment)
                {
                    DatagramsReceived++;
                    datagrams++;
                    try
                    {
                        _endpoint.Receive(data.Slice(offset, Math.Min(segment, data.Length - offset)), remote, ecn, now);
                    }
                    catch (Exception e)
                    {
                        // Defence in depth, as above: one datagram that trips a bug is dropped, the process lives on.
                        MessagesDropped++;
                        OnUnhandled(e);
                    }
                    if (++sinceFlush == FlushEveryDatagrams)
                    {
                        sinceFlush = 0;
                        Flush(now); // keep ACKs flowing during a long burst
                    }
                }
            }
            if (count < _receiver.Capacity) break; // the queue is empty: no need to ask again
        }
    }

    private void Flush(long now)
    {
        while (!_stopping && _endpoint.TrySend(_sendBuffer, now, out OutgoingDatagram datagram))
        {
            if (datagram.Length <= 0) continue;
            SocketAddress target = _addresses.ForSend(datagram.Remote);
            int segment = datagram.SegmentSize <= 0 ? datagram.Length : datagram.SegmentSize;
            try
            {
                _pathSignals.EnsureMarking(datagram.Ecn);
                if (datagram.Length > segment && _segmentation.Ensure(segment))
                {
                    _socket.SendTo(_sendBuffer.AsSpan(0, datagram.Length), SocketFlags.None, target);
                    SendCalls++;
                    DatagramsSent += (datagram.Length + segment - 1) / segment;
                    continue;
                }
                for (int offset = 0; offset < datagram.Length; offset += segment)
                {
                    int length = Math.Min(segment, datagram.Length - offset);
                    if (!_segmentation.PrepareSingleSend(length)) continue; // cannot send it unsplit: treat as lost
                    _socket.SendTo(_sendBuffer.AsSpan(offset, length), SocketFlags.None, target);
                    SendCalls++;
                    DatagramsSent++;
                }
            }
            catch (SocketException e)
            {
                // UDP is unreliable anyway: a failed send is a lost datagram, which recovery handles.
                SocketErrorHandler?.Invoke(e.SocketErrorCode);
            }
            catch (ObjectDisposedException)
            {
                return;
            }
        }
    }

    /// <summary>Stops the thread (waiting for it) and closes the socket.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1) return;
        _stopping = true;
        if (_loop is not null)
        {
            if (Volatile.Read(ref _started) == 1)
            {
                // The loop closes the socket once it stopped waiting on it (OnDetached); on the loop's own thread that
                // happens right after the current turn, elsewhere this waits for it.
                _loop.Detach(this);
                if (!IsDriverThread) _loopExited.Wait(TimeSpan.FromSeconds(5));
                return;
            }
            _loop.CancelReservation();
            ReleaseLoopDriver();
            return;
        }
        Interlocked.Exchange(ref _sleeping, 1);
        SignalWake();
        if (Volatile.Read(ref _started) == 1 && !IsDriverThread) _loopExited.Wait(TimeSpan.FromSeconds(5));
        if (Volatile.Read(ref _started) == 0) _receiver.Release(); // never started: no thread will release them
        _socket.Dispose();
        _wakeSocket?.Dispose();
        _wake?.Dispose();
        // Work posted before the stop that the loop did not run, and any posted from now on, is abandoned.
        _abandoning = true;
        AbandonWork();
    }
}
