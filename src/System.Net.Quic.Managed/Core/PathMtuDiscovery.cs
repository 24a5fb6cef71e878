namespace System.Net.Quic.Managed.Core;

/// <summary>
/// Datagram Packetization Layer PMTU Discovery (RFC 8899, RFC 9000 §14.3) for one connection: which probe to send next
/// (a PING padded to the size tried: first the maximum, then a binary search), the size the connection may send (raised
/// when a probe is acknowledged), and black-hole detection (packets above the 1,200-byte base keep getting lost while
/// none is acknowledged: fall back to the base and search again). Sans-IO and single-threaded; lost probes are no
/// congestion signal (the sent-packet tracker knows them as path probes).
/// </summary>
internal sealed class PathMtuDiscovery
{
    /// <summary>BASE_PLPMTU: the smallest size QUIC requires of every path (RFC 9000 §14.1).</summary>
    public const int BaseSize = Connection.MinInitialDatagramSize;

    /// <summary>MAX_PROBES (RFC 8899 §5.1.2): a size fails after this many lost probes in a row.</summary>
    public const int MaxProbes = 3;

    /// <summary>Lost packets above the base size in a row, with none acknowledged, that mean a black hole.</summary>
    public const int BlackHoleThreshold = 6;

    private readonly int _initial;
    private int _max;
    private int _low;
    private int _high;
    private int _candidate;
    private int _failures;
    private int _probeInFlight;
    private int _largeLost;
    private bool _started;

    /// <summary><paramref name="initial"/>: the size used before any probe; <paramref name="max"/>: the largest to probe for (0 or at most <paramref name="initial"/>: no discovery).</summary>
    public PathMtuDiscovery(int initial, int max)
    {
        _initial = initial;
        Current = initial;
        _max = max;
        Enabled = max > initial;
    }

    public bool Enabled { get; }

    /// <summary>The largest datagram the connection sends now.</summary>
    public int Current { get; private set; }

    /// <summary>Probes sent, acknowledged and lost; black holes detected.</summary>
    public int ProbesSent { get; private set; }

    public int ProbesAcknowledged { get; private set; }

    public int ProbesLost { get; private set; }

    public int BlackHolesDetected { get; private set; }

    /// <summary>True once the search ended (the largest size that works is known, within the bounds).</summary>
    public bool SearchComplete => _started && _low >= _high;

    /// <summary>Starts the search once the peer's max_udp_payload_size is known and the handshake is confirmed.</summary>
    public void Start(int peerMaxUdpPayloadSize)
    {
        if (!Enabled || _started) return;
        _started = true;
        _max = Math.Min(_max, peerMaxUdpPayloadSize);
        Restart();
    }

    /// <summary>The size of the probe to send now, or 0 (none due, one in flight, or the search is over).</summary>
    public int NextProbeSize => _started && _probeInFlight == 0 && _low < _high ? _candidate : 0;

    public void OnProbeSent(int size)
    {
        _probeInFlight = size;
        ProbesSent++;
    }

    /// <summary>A probe of <paramref name="size"/> bytes was acknowledged: the path carries it. True when <see cref="Current"/> grew.</summary>
    public bool OnProbeAcknowledged(int size)
    {
        ProbesAcknowledged++;
        if (size == _probeInFlight) _probeInFlight = 0;
        _largeLost = 0;
        if (!_started || size <= Current) return false;
        Current = size;
        _low = Math.Max(_low, size);
        if (_high < _low) _high = _low;
        _failures = 0;
        _candidate = NextCandidate();
        return true;
    }

    /// <summary>A probe was declared lost: after <see cref="MaxProbes"/> losses the size counts as too large.</summary>
    public void OnProbeLost(int size)
    {
        ProbesLost++;
        if (size != _probeInFlight) return;
        _probeInFlight = 0;
        if (size != _candidate || ++_failures < MaxProbes) return;
        _failures = 0;
        _high = Math.Max(_low, size - 1);
        _candidate = NextCandidate();
    }

    /// <summary>A packet that is not a probe was acknowledged.</summary>
    public void OnPacketAcknowledged(int size)
    {
        if (size > BaseSize) _largeLost = 0;
    }

    /// <summary>A packet that is not a probe was declared lost. True when that made <see cref="Current"/> fall back to the base.</summary>
    public bool OnPacketLost(int size)
    {
        if (!_started || size <= BaseSize || Current <= BaseSize) return false;
        if (++_largeLost < BlackHoleThreshold) return false;
        // RFC 8899 §4.3: a black hole: back to BASE_PLPMTU, then search again (the probes find what the path carries now).
        BlackHolesDetected++;
        Current = BaseSize;
        Restart();
        return true;
    }

    /// <summary>
    /// Consecutive PTOs (<paramref name="ptoCount"/>, after the increment) of the Application Data space: when every packet
    /// is above the base and the path swallows them, nothing is ever acknowledged, so no loss is ever declared. After
    /// <see cref="BlackHolePtoCount"/> in a row, fall back to the base (the probe that follows gets through and its
    /// acknowledgment declares the large packets lost). True when <see cref="Current"/> fell back.
    /// </summary>
    public bool OnProbeTimeout(int ptoCount)
    {
        if (!_started || Current <= BaseSize || ptoCount < BlackHolePtoCount) return false;
        BlackHolesDetected++;
        Current = BaseSize;
        Restart();
        return true;
    }

    /// <summary>Consecutive PTOs that count as a black hole for packets above the base size.</summary>
    public const int BlackHolePtoCount = 2;

    /// <summary>A new path: back to the initial size and search again.</summary>
    public void OnPathChanged()
    {
        if (!_started) return;
        Current = Math.Min(Current, _initial);
        Restart();
    }

    private void Restart()
    {
        _low = Current;
        _high = Math.Max(_max, Current);
        _failures = 0;
        _largeLost = 0;
        _probeInFlight = 0;
        // The maximum first: on most paths (and loopback) it is all that is needed; then halve the interval.
        _candidate = _high;
    }

    private int NextCandidate() => _low >= _high ? 0 : _low + (_high - _low + 1) / 2;
}
