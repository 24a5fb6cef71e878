using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// One thread that runs several <see cref="UdpDriver"/>s (each with its own socket and endpoint): it waits on all their
/// sockets at once (an epoll(7) set on Linux; poll(2) or Socket.Select over all of them where there is no epoll), receives
/// from the ready ones, and steps a driver only when it has something to do. A turn costs in proportion to the drivers
/// that have work, not to the drivers held: drivers ask for a step through a queue (posted work, a wake-up, datagrams),
/// and their next deadlines sit in a min-heap with lazy invalidation (an entry is live while it equals the driver's
/// <see cref="UdpDriver.ScheduledUs"/>). Client connections share a few of these (<see cref="ForClient"/>: one per core)
/// instead of a thread each, so that many connections in a process do not burn the cores in wake-ups and context
/// switches. Server listeners keep a thread of their own. A driver is only ever touched by its loop's thread.
/// </summary>
internal sealed class UdpDriverLoop
{
    /// <summary>Environment variable: the number of shared client loops (default: one per processor; 0: a thread per connection).</summary>
    public const string ClientLoopsEnvironmentVariable = "QUIC_MANAGED_CLIENT_LOOPS";

    /// <summary>A loop with no driver for this long ends its thread and closes its wake-up sockets (a later connection starts a new one).</summary>
    public static readonly TimeSpan IdleExit = TimeSpan.FromSeconds(10);

    private static readonly object s_gate = new();
    private static UdpDriverLoop?[]? s_clientLoops;

    private readonly List<UdpDriver> _drivers = new();
    private readonly ConcurrentQueue<UdpDriver> _requests = new();
    private readonly DeadlineHeap<UdpDriver> _timers = new();
    private readonly Dictionary<int, UdpDriver> _byDescriptor = new();
    private readonly SafeHandle? _epoll;
    private readonly byte[] _epollEvents = new byte[64 * 16];
    private readonly int[] _epollReady = new int[64];
    private readonly ConcurrentQueue<UdpDriver> _attach = new();
    private readonly ConcurrentQueue<UdpDriver> _detach = new();
    private readonly WakeSignal _wake;
    private readonly List<Socket> _readList = new();
    private readonly List<Socket> _errorList = new();
    private LinuxUdpInterop.PollFd[] _pollFds = new LinuxUdpInterop.PollFd[8];
    private bool _nativePoll = OperatingSystem.IsLinux() && !UdpReceiver.BatchingDisabledByConfiguration;
    private int _sleeping;
    private int _count;
    private bool _exited;
    private long _emptySinceUs = MonotonicClock.NowUs;

    public UdpDriverLoop(string name)
    {
        _wake = WakeSignal.Create(_nativePoll);
        // epoll needs the eventfd wake-up (both are waited on with one ppoll): without one, the portable paths.
        if (_nativePoll && _wake.IsEventFd) _epoll = LinuxUdpInterop.TryCreateEpoll();
        var thread = new Thread(Run) { IsBackground = true, Name = name };
        Thread = thread;
        thread.Start();
    }

    /// <summary>The loop's thread.</summary>
    public Thread Thread { get; }

    /// <summary>Drivers reserved or attached and not yet detached (approximate while attaches and detaches are in flight).</summary>
    public int Count => Volatile.Read(ref _count);

    /// <summary>Configured number of shared client loops: <see cref="ClientLoopsEnvironmentVariable"/> or the processor count.</summary>
    public static int ClientLoopCount
    {
        get
        {
            string? value = Environment.GetEnvironmentVariable(ClientLoopsEnvironmentVariable);
            if (int.TryParse(value, out int configured) && configured >= 0) return Math.Min(configured, 256);
            return Environment.ProcessorCount;
        }
    }

    /// <summary>
    /// The least busy of the shared client loops (created on first use), or null when configuration asks for a thread
    /// per connection.
    /// </summary>
    public static UdpDriverLoop? ForClient()
    {
        lock (s_gate)
        {
            UdpDriverLoop?[] loops = s_clientLoops ??= new UdpDriverLoop[ClientLoopCount];
            if (loops.Length == 0) return null;
            UdpDriverLoop? best = null;
            for (int i = 0; i < loops.Length; i++)
            {
                // A loop that ended for lack of drivers is replaced by a new one when needed again.
                UdpDriverLoop loop = loops[i] is { _exited: false } running ? running : loops[i] = new UdpDriverLoop($"QuicManaged client loop {i}");
                if (best is null || loop.Count < best.Count) best = loop;
            }
            // Reserved under the lock, so the loop cannot decide to exit before the driver attaches.
            best!.Reserve();
            return best;
        }
    }

    /// <summary>Counts a driver that will attach (under the pool's lock in <see cref="ForClient"/>).</summary>
    internal void Reserve() => Interlocked.Increment(ref _count);

    /// <summary>A driver reserved by <see cref="ForClient"/> will never attach (disposed before it started).</summary>
    public void CancelReservation() => Interlocked.Decrement(ref _count);

    /// <summary>Any thread: the driver joins this loop (its first step follows at once).</summary>
    public void Attach(UdpDriver driver)
    {
        _attach.Enqueue(driver);
        Wake();
    }

    /// <summary>Any thread: the driver leaves after the current turn; the loop then calls <see cref="UdpDriver.OnDetached"/>.</summary>
    public void Detach(UdpDriver driver)
    {
        _detach.Enqueue(driver);
        Wake();
    }

    /// <summary>Any thread: <paramref name="driver"/> wants a step (see <see cref="UdpDriver.RequestStep"/>).</summary>
    internal void Request(UdpDriver driver)
    {
        _requests.Enqueue(driver);
        Wake();
    }

    /// <summary>Any thread: interrupts the wait so the loop looks at its drivers again.</summary>
    public void Wake()
    {
        if (Interlocked.Exchange(ref _sleeping, 0) != 1) return;
        _wake.Signal(); // after the loop ended (no drivers left) this is ignored
    }

    private void Run()
    {
        LinuxUdpInterop.TrySetMinimalTimerSlack(); // precise poll timeouts (WakeSignal.PollTimeoutUs)
        while (true)
        {
            ApplyMembershipChanges();
            long now = MonotonicClock.NowUs;
            // The drivers that asked, each once per turn (one asking again during its step waits for the next turn).
            for (int pending = _requests.Count; pending > 0 && _requests.TryDequeue(out UdpDriver? driver); pending--)
            {
                if (!driver.Attached || driver.IsStopping) continue;
                StepSafely(driver, now);
            }
            // The drivers whose deadline is due.
            while (_timers.TryTakeDue(now, out UdpDriver? due))
            {
                if (due.IsStopping) continue;
                StepSafely(due, now);
            }
            ApplyMembershipChanges();

            Interlocked.Exchange(ref _sleeping, 1);
            if (!_requests.IsEmpty || !_attach.IsEmpty || !_detach.IsEmpty)
            {
                Volatile.Write(ref _sleeping, 0);
                continue;
            }
            long deadline = _timers.NextDeadlineUs;
            now = MonotonicClock.NowUs;
            if (_drivers.Count > 0)
            {
                _emptySinceUs = now;
            }
            else if (now - _emptySinceUs >= (long)IdleExit.TotalMicroseconds && TryExit())
            {
                return;
            }
            else
            {
                deadline = Math.Min(deadline, _emptySinceUs + (long)IdleExit.TotalMicroseconds);
            }
            int waitUs = deadline == long.MaxValue ? -1 : (int)Math.Clamp(deadline - now, 0, int.MaxValue);
            Wait(waitUs);
            Volatile.Write(ref _sleeping, 0);
        }
    }

    /// <summary>One step of <paramref name="driver"/>, then its deadline into the heap and, if it left work, a new request.</summary>
    private void StepSafely(UdpDriver driver, long now)
    {
        driver.ClearStepRequest();
        try
        {
            driver.Step(now);
        }
        catch (Exception)
        {
            // Step reports everything it can itself; a socket error escaping it must not end the loop of every driver.
        }
        Reschedule(driver);
        if (driver.HasLeftoverWork) driver.RequestStep();
    }

    private void Reschedule(UdpDriver driver) => _timers.Schedule(driver, driver.NextDeadline, _drivers);

    /// <summary>No driver for <see cref="IdleExit"/>: leave the pool and release the thread and sockets, unless one was just reserved.</summary>
    private bool TryExit()
    {
        lock (s_gate)
        {
            if (Volatile.Read(ref _count) != 0 || !_attach.IsEmpty) return false;
            _exited = true;
        }
        _wake.Dispose();
        return true;
    }

    private void ApplyMembershipChanges()
    {
        while (_attach.TryDequeue(out UdpDriver? added))
        {
            if (added.IsStopping) continue; // disposed before it ever ran: its detach (queued or done) cleans up
            added.LoopIndex = _drivers.Count;
            _drivers.Add(added);
            added.Attached = true;
            if (_epoll is not null)
            {
                int fd = (int)added.Socket.SafeHandle.DangerousGetHandle();
                _byDescriptor[fd] = added;
                LinuxUdpInterop.EpollAdd(_epoll, added.Socket.SafeHandle);
            }
            added.OnAttached(Thread);
        }
        while (_detach.TryDequeue(out UdpDriver? removed))
        {
            if (removed.Attached)
            {
                // O(1): the last driver takes the removed one's place.
                int index = removed.LoopIndex, last = _drivers.Count - 1;
                _drivers[index] = _drivers[last];
                _drivers[index].LoopIndex = index;
                _drivers.RemoveAt(last);
                removed.Attached = false;
                _timers.Unschedule(removed);
                if (_epoll is not null)
                {
                    // Before OnDetached closes the socket: its descriptor number may be reused at once.
                    _byDescriptor.Remove((int)removed.Socket.SafeHandle.DangerousGetHandle());
                    LinuxUdpInterop.EpollRemove(_epoll, removed.Socket.SafeHandle);
                }
                // Another local path of the same connection shares the endpoint whose deadline this driver may have
                // been the one to carry: they look at it again (a path changes rarely, so the scan is rare too).
                if (removed.IsLocalPath) RequestSiblings(removed);
            }
            Interlocked.Decrement(ref _count);
            try
            {
                removed.OnDetached();
            }
            catch (Exception)
            {
                // Closing a socket does not fail in practice; whatever happens, the other drivers keep running.
            }
        }
    }

    private void RequestSiblings(UdpDriver removed)
    {
        object key = removed.EndpointKey;
        foreach (UdpDriver driver in _drivers)
        {
            if (driver.EndpointKey == key) driver.RequestStep();
        }
    }

    /// <summary>
    /// Loop thread, as soon as its wait returns: other threads stop signalling it, and so does the loop itself, whose
    /// ready sockets request steps (<see cref="Request"/>) before the loop turns again; with the flag still set each
    /// of those wrote the loop's own eventfd and cost the next wait a needless return and read.
    /// </summary>
    private void Awake() => Volatile.Write(ref _sleeping, 0);

    /// <summary>Waits for a readable socket, a wake-up or the deadline, then receives from every ready socket.</summary>
    private void Wait(int waitUs)
    {
        int count = _drivers.Count;
        if (_epoll is not null)
        {
            // One ppoll(2) on the epoll set and the wake-up (microsecond timeout), then the ready sockets without waiting.
            bool waited = LinuxUdpInterop.WaitReadable(_epoll, _wake.Handle, WakeSignal.PollTimeoutUs(waitUs), out bool readable, out bool wakeReady);
            Awake();
            if (!waited) return;
            if (wakeReady) _wake.Drain();
            if (!readable) return;
            int ready = LinuxUdpInterop.EpollTakeReady(_epoll, _epollEvents, _epollReady);
            for (int i = 0; i < ready; i++)
            {
                if (_byDescriptor.TryGetValue(_epollReady[i], out UdpDriver? driver)) driver.ReceiveReady();
            }
            return;
        }
        if (_nativePoll)
        {
            try
            {
                if (_pollFds.Length < count + 1) _pollFds = new LinuxUdpInterop.PollFd[Math.Max(count + 1, _pollFds.Length * 2)];
                Span<LinuxUdpInterop.PollFd> fds = _pollFds.AsSpan(0, count + 1);
                fds[0] = new LinuxUdpInterop.PollFd { Fd = (int)_wake.Handle.DangerousGetHandle(), Events = LinuxUdpInterop.PollReadable };
                for (int i = 0; i < count; i++)
                {
                    // Only this thread closes a driver's socket (OnDetached), so the descriptor stays valid during the call.
                    fds[i + 1] = new LinuxUdpInterop.PollFd { Fd = (int)_drivers[i].Socket.SafeHandle.DangerousGetHandle(), Events = LinuxUdpInterop.PollReadable };
                }
                int ready = LinuxUdpInterop.Poll(fds, WakeSignal.PollTimeoutUs(waitUs));
                Awake();
                if (ready > 0)
                {
                    if (LinuxUdpInterop.IsReady(fds[0])) _wake.Drain();
                    for (int i = 0; i < count; i++)
                    {
                        if (LinuxUdpInterop.IsReady(fds[i + 1])) _drivers[i].ReceiveReady();
                    }
                }
                return;
            }
            catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
            {
                _nativePoll = false; // continue on the portable path for good (an eventfd needs libc too: never with one)
            }
        }

        _readList.Clear();
        _errorList.Clear();
        if (_wake.Socket is { } wakeSocket) _readList.Add(wakeSocket);
        for (int i = 0; i < count; i++)
        {
            _readList.Add(_drivers[i].Socket);
            // A pending ICMP error (POLLERR) does not make a socket readable to Select: ask for errors too.
            _errorList.Add(_drivers[i].Socket);
        }
        try
        {
            Socket.Select(_readList, null, _errorList, waitUs);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            return;
        }
        finally
        {
            Awake();
        }
        if (_wake.Socket is { } woken && _readList.Contains(woken)) _wake.Drain();
        for (int i = 0; i < count; i++)
        {
            Socket socket = _drivers[i].Socket;
            if (_readList.Contains(socket) || _errorList.Contains(socket)) _drivers[i].ReceiveReady();
        }
    }
}
