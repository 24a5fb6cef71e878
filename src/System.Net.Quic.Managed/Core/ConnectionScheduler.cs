using System.Collections.Generic;
using System.Net.Quic.Managed.Ids;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What an <see cref="Endpoint"/> keeps about one of its connections so that a step never walks all of them: the
/// connection's place in the endpoint's list, whether it waits in the ready queue, the deadline it has in the timer heap,
/// whether its events wait for the API layer, and the peer's stateless reset tokens it is indexed under.
/// Owned and written by the endpoint's thread only.
/// </summary>
internal sealed class ConnectionSlot
{
    /// <summary>The scheduler of the endpoint that drives the connection (null before it joins one, and in unit tests of a bare connection).</summary>
    public ConnectionScheduler? Scheduler;

    /// <summary>Position in the endpoint's connection list (removal swaps the last one in): -1 when not listed.</summary>
    public int Index = -1;

    /// <summary>In the ready queue: it will be offered <see cref="Connection.TrySend"/> in this step.</summary>
    public bool Ready;

    /// <summary>In the serviced list: the API layer drains its events after this step.</summary>
    public bool Serviced;

    /// <summary>The deadline its live entry in the timer heap has (long.MaxValue: none).</summary>
    public long ScheduledUs = long.MaxValue;

    /// <summary>Counted in <see cref="Endpoint.HandshakesInProgress"/>.</summary>
    public bool HandshakeCounted;

    /// <summary>The peer's reset tokens the endpoint routes to this connection, and the version of the peer's ID set they came from.</summary>
    public StatelessResetToken[] ResetTokens = [];
    public int ResetTokensVersion = -1;

    /// <summary>Calls the endpoint made into the connection (receive, timeout, send): tests check idle connections get none.</summary>
    public long Calls;
}

/// <summary>
/// The endpoint's work lists (after quinn's endpoint and ngtcp2's expiry handling): a FIFO ready queue of connections that
/// received datagrams, had application work posted or had a timer fire, and a min-heap of connection deadlines with lazy
/// invalidation (an entry is live while the connection's <see cref="ConnectionSlot.ScheduledUs"/> still equals it; stale
/// ones are dropped when they reach the top, or all at once when they outnumber the live ones). A step costs in proportion
/// to the connections that have something to do, never to the connections held.
/// </summary>
internal sealed class ConnectionScheduler
{
    private readonly Queue<Connection> _ready = new();
    private readonly DeadlineHeap<Connection> _timers = new();
    private readonly List<Connection> _serviced = new();

    /// <summary>
    /// True when someone drains <see cref="DrainServiced"/> after each step (the API layer's driver host); otherwise nothing
    /// is recorded (the simulator and the unit tests read connection events themselves).
    /// </summary>
    public bool TracksServiced { get; set; }

    /// <summary>Connections waiting in the ready queue.</summary>
    public int ReadyCount => _ready.Count;

    /// <summary>Entries in the timer heap, stale ones included (for tests: bounded by about twice the live ones).</summary>
    public int TimerEntries => _timers.Count;

    /// <summary>True while a connection waits to be offered a send or to have its events drained.</summary>
    public bool HasPendingWork => _ready.Count > 0 || _serviced.Count > 0;

    /// <summary>Queues <paramref name="connection"/> for a send attempt in this step (once, however often it is asked).</summary>
    public void MarkReady(Connection connection)
    {
        ConnectionSlot slot = connection.Slot;
        if (slot.Ready || slot.Index < 0) return;
        slot.Ready = true;
        _ready.Enqueue(connection);
    }

    public bool TryPeekReady(out Connection connection) => _ready.TryPeek(out connection!);

    /// <summary>The connection at the front sent a batch: it goes to the back, so busy connections take turns.</summary>
    public void RotateReady() => _ready.Enqueue(_ready.Dequeue());

    /// <summary>The connection at the front has nothing more to send now: it leaves the queue.</summary>
    public Connection DequeueReady()
    {
        Connection connection = _ready.Dequeue();
        connection.Slot.Ready = false;
        return connection;
    }

    /// <summary>Records the connection's events for the API layer (when someone drains them).</summary>
    public void MarkServiced(Connection connection)
    {
        if (!TracksServiced || connection.Slot.Serviced) return;
        connection.Slot.Serviced = true;
        _serviced.Add(connection);
    }

    /// <summary>Moves the serviced connections into <paramref name="into"/> (cleared first) and forgets them.</summary>
    public void DrainServiced(List<Connection> into)
    {
        into.Clear();
        foreach (Connection connection in _serviced)
        {
            connection.Slot.Serviced = false;
            into.Add(connection);
        }
        _serviced.Clear();
    }

    /// <summary>
    /// Puts the connection's current deadline in the heap when it changed; <paramref name="all"/> (the endpoint's
    /// connections) serves the heap's rebuild when stale entries outnumber the live ones.
    /// </summary>
    public void Reschedule(Connection connection, List<Connection> all) => _timers.Schedule(connection, connection.NextTimeoutUs, all);

    /// <summary>A removed connection keeps no live timer.</summary>
    public void Unschedule(Connection connection) => _timers.Unschedule(connection);

    /// <summary>The earliest live deadline (long.MaxValue: none).</summary>
    public long NextDeadlineUs => _timers.NextDeadlineUs;

    /// <summary>Takes the next connection whose deadline is at or before <paramref name="nowUs"/>; its entry is no longer live.</summary>
    public bool TryTakeDue(long nowUs, out Connection connection) => _timers.TryTakeDue(nowUs, out connection);

    public void Clear()
    {
        _ready.Clear();
        _timers.Clear();
        _serviced.Clear();
    }
}
