using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;
using System.Threading;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// One UDP socket, its driver thread and its sans-IO <see cref="Endpoint"/>: a client connection owns one, a listener
/// owns one shared by the connections it accepted. After each driver step it drains the events of the connections the
/// step serviced (the endpoint records them; idle connections are not looked at) into the public objects' waiters
/// (still on the driver thread; waiters complete asynchronously). Reference-counted:
/// the listener and each connection hold a reference, so accepted connections outlive a disposed listener.
/// A client connection's driver runs on one of the shared client loops (<see cref="UdpDriverLoop.ForClient"/>), a
/// listener's on a thread of its own.
/// </summary>
internal sealed partial class ManagedDriverHost
{
    private readonly List<Connection> _serviced = new();
    private int _references = 1;
    private bool _released;

    /// <summary>
    /// A host for <paramref name="socket"/>; <paramref name="sharedPort"/>: one socket of an SO_REUSEPORT group (see
    /// <see cref="UdpDriver"/>); <paramref name="loop"/>: the shared loop the driver runs on (client connections), or
    /// null for a thread of its own.
    /// </summary>
    public ManagedDriverHost(Socket socket, Endpoint endpoint, string name, bool sharedPort = false, UdpDriverLoop? loop = null, bool multiPath = false)
    {
        Endpoint = endpoint;
        endpoint.TrackServicedConnections();
        IDatagramEndpoint driven = endpoint;
        if (multiPath && loop is not null)
        {
            // Several sockets (local paths, see ManagedDriverHost.Paths.cs): every driver wraps the endpoint with its path.
            Paths = new LocalPathSockets();
            Paths.Set(0, socket);
            driven = new LocalPathEndpoint(endpoint, 0, Paths);
        }
        Driver = new UdpDriver(socket, driven, enableSegmentation: true, name, sharedPort: sharedPort, loop: loop);
        Driver.StepCompleted = OnStep;
    }

    public UdpDriver Driver { get; }

    public Endpoint Endpoint { get; }

    /// <summary>The listeners whose connections arrive on this endpoint (server only); set before <see cref="Start"/>.</summary>
    public ListenerPort? Listeners { get; init; }

    /// <summary>True once the last reference is given back (the socket and thread are being released).</summary>
    public bool IsDisposed => Volatile.Read(ref _references) <= 0;

    /// <summary>True once the socket is closed and the thread has ended (the port can be bound again).</summary>
    public bool IsReleased => Volatile.Read(ref _released);

    public void Start() => Driver.Start();

    public void Post(IDriverWorkItem item) => Driver.Post(item);

    /// <summary>Driver thread: the connection's events are drained after every step that services its core from now on.</summary>
    public void Add(ManagedConnection connection)
    {
        Connection core = connection.Core!;
        core.Owner = connection;
        // Serviced in this step, so what its core queued before it had an owner is drained now.
        Endpoint.Wake(core);
    }

    public void AddReference() => Interlocked.Increment(ref _references);

    public void Release()
    {
        if (Interlocked.Decrement(ref _references) != 0) return;
        if (Driver.IsDriverThread)
        {
            // The thread cannot join itself: finish on the pool.
            ThreadPool.UnsafeQueueUserWorkItem(static h => h.DisposeNow(), this, preferLocal: false);
        }
        else
        {
            DisposeNow();
        }
    }

    private void DisposeNow()
    {
        DisposePathDrivers();
        Driver.Dispose();
        Endpoint.Dispose();
        Volatile.Write(ref _released, true);
    }

    private void OnStep()
    {
        Listeners?.OnStep(this);
        Endpoint.DrainServiced(_serviced);
        foreach (Connection core in _serviced)
        {
            if (core.Owner is ManagedConnection { IsDetached: false } connection) connection.ProcessEvents();
        }
    }
}
