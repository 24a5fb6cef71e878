using System.Collections.Generic;
using System.Threading;

namespace System.Net.Quic.Managed.Io;

/// <summary>
/// Dedicated threads for <see cref="UdpDriver"/> loops, kept after a loop ends so the next driver starts without
/// creating a thread. Every client connection has its own socket and driver; creating its thread (stack mapping,
/// start-up hand-shake with the runtime) measured ~0.4 ms of a ~3 ms loopback connect on a 2-vCPU VM, paid on the
/// connecting thread. A thread still runs exactly one loop at a time, so one thread owns each socket.
/// Threads idle longer than <see cref="IdleTimeout"/> exit; at most <see cref="MaxIdleThreads"/> wait at once.
/// </summary>
internal static class DriverThreadPool
{
    /// <summary>Parked threads kept at most; a finishing loop beyond this lets its thread exit.</summary>
    public const int MaxIdleThreads = 64;

    /// <summary>How long a parked thread waits for a next loop before exiting.</summary>
    public static readonly TimeSpan IdleTimeout = TimeSpan.FromSeconds(10);

    private static readonly Stack<Worker> s_idle = new();

    /// <summary>Parked threads now (tests).</summary>
    public static int IdleCount
    {
        get
        {
            lock (s_idle) return s_idle.Count;
        }
    }

    /// <summary>Runs <paramref name="loop"/> on a parked thread, or on a new one when none is parked.</summary>
    public static void Run(Action loop, string name)
    {
        // A new Thread runs in the starter's ExecutionContext (AsyncLocal values): keep that for a reused one.
        ExecutionContext? context = ExecutionContext.Capture();
        lock (s_idle)
        {
            while (s_idle.Count > 0)
            {
                Worker parked = s_idle.Pop();
                if (parked.TryAssign(loop, name, context)) return;
            }
        }
        var worker = new Worker();
        worker.TryAssign(loop, name, context);
        var thread = new Thread(worker.Main) { IsBackground = true, Name = name };
        thread.Start();
    }

    private sealed class Worker
    {
        private readonly object _gate = new();
        private Action? _loop;
        private string _name = "";
        private ExecutionContext? _context;
        private bool _exited;

        /// <summary>False when the worker timed out and is exiting (it is then no longer parked).</summary>
        public bool TryAssign(Action loop, string name, ExecutionContext? context)
        {
            lock (_gate)
            {
                if (_exited) return false;
                _loop = loop;
                _name = name;
                _context = context;
                Monitor.Pulse(_gate);
                return true;
            }
        }

        public void Main()
        {
            LinuxUdpInterop.TrySetMinimalTimerSlack(); // precise poll timeouts (WakeSignal.PollTimeoutUs)
            bool first = true;
            while (true)
            {
                Action loop;
                ExecutionContext? context;
                lock (_gate)
                {
                    while (_loop is null)
                    {
                        if (!Monitor.Wait(_gate, IdleTimeout) && _loop is null)
                        {
                            _exited = true;
                            break;
                        }
                    }
                    if (_exited) break;
                    loop = _loop!;
                    context = _context;
                    _loop = null;
                    _context = null;
                }
                if (!first) TryRename(_name);
                first = false;
                if (context is null) loop();
                else ExecutionContext.Run(context, static state => ((Action)state!)(), loop);

                lock (s_idle)
                {
                    if (s_idle.Count >= MaxIdleThreads) return;
                    s_idle.Push(this);
                }
            }
            // Timed out: leave the idle stack (Run skips exited workers it pops, this keeps the stack short).
            lock (s_idle)
            {
                if (s_idle.Count > 0 && s_idle.Contains(this))
                {
                    var keep = new Stack<Worker>(s_idle.Count);
                    foreach (Worker w in s_idle) if (w != this) keep.Push(w);
                    s_idle.Clear();
                    foreach (Worker w in keep) s_idle.Push(w);
                }
            }
        }

        private static void TryRename(string name)
        {
            try
            {
                Thread.CurrentThread.Name = name; // diagnostics only (debuggers, perf): never worth failing over
            }
            catch (InvalidOperationException)
            {
            }
        }
    }
}
