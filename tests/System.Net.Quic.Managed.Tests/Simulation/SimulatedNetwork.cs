using System.Buffers;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// A deterministic in-memory UDP network with a virtual clock in microseconds. Endpoints are attached at
/// <see cref="SimAddress"/>es; hosts are joined by <see cref="SimulatedLink"/>s whose directions apply delay, jitter,
/// bandwidth and drop-tail queueing, loss (random, burst), reordering, duplication and corruption. Every random
/// draw comes from one <see cref="Random"/> seeded at construction, and events at equal times run in scheduling
/// order, so one seed always reproduces the same run (compare <see cref="Trace"/> or <see cref="TraceFingerprint"/>).
/// </summary>
/// <remarks>
/// Per datagram sent on a link direction, in order: statistics and trace "Sent"; the <see cref="Interceptor"/>;
/// the MTU check; the bottleneck (queue limit, serialization at the link rate); forced drops
/// (<see cref="SimulatedLinkDirection.DropNext"/>), the burst-loss model and random loss (after the bottleneck, so
/// lost datagrams still used link capacity); propagation delay plus jitter (kept FIFO unless
/// <see cref="LinkConditions.AllowJitterReordering"/>); reordering hold-back; duplication (the copy is taken before
/// corruption); corruption of one bit.
/// </remarks>
internal sealed class SimulatedNetwork
{
    /// <summary>Size of the buffer handed to <see cref="ISimulatedEndpoint.TrySend"/> (the largest UDP payload over IPv4).</summary>
    public const int SendBufferSize = 65507;

    private readonly PriorityQueue<PendingDelivery, (long TimeUs, long Sequence)> _queue = new();
    private readonly List<ISimulatedEndpoint> _endpoints = new();
    private readonly List<SimAddress> _endpointAddresses = new();
    private readonly Dictionary<SimAddress, int> _endpointByAddress = new();
    private readonly Dictionary<(int From, int To), SimulatedLinkDirection> _routes = new();
    private readonly List<SimulatedLink> _links = new();
    private readonly List<SimTraceEntry> _trace = new();
    private readonly InterceptedDatagram _intercepted = new();
    private readonly byte[] _sendBuffer = new byte[SendBufferSize];
    private long _sequence;
    private int _nextDirectionId;

    public SimulatedNetwork(int seed)
    {
        Seed = seed;
        Random = new Random(seed);
    }

    public int Seed { get; }

    /// <summary>The network's only source of randomness. Endpoints may draw from it too (deterministically).</summary>
    public Random Random { get; }

    /// <summary>The virtual clock. Starts at 0 and only moves forward.</summary>
    public long NowUs { get; private set; }

    /// <summary>Livelock guard for one RunUntil/RunFor call: deliveries + timer firings + datagrams sent.</summary>
    public long MaxEventsPerRun { get; set; } = 2_000_000;

    /// <summary>Events processed over the network's life.</summary>
    public long TotalEvents { get; private set; }

    /// <summary>When false, <see cref="Trace"/> is not recorded (for long bulk runs).</summary>
    public bool TraceEnabled { get; set; } = true;

    public IReadOnlyList<SimTraceEntry> Trace => _trace;

    /// <summary>Hook called for every datagram entering a link; null = none.</summary>
    public DatagramInterceptor? Interceptor { get; set; }

    /// <summary>Datagrams sent to a host with no link from the sender's host.</summary>
    public long NoRouteDrops { get; private set; }

    /// <summary>Injected datagrams (no link) that found no endpoint.</summary>
    public long UnlinkedNoEndpointDrops { get; private set; }

    public IReadOnlyList<SimulatedLink> Links => _links;

    /// <summary>Number of datagrams scheduled and not yet delivered.</summary>
    public int InFlight => _queue.Count;

    /// <summary>Attaches an endpoint. Endpoints are polled and timed out in the order they were added.</summary>
    public void AddEndpoint(SimAddress address, ISimulatedEndpoint endpoint)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        if (_endpointByAddress.ContainsKey(address))
        {
            throw new InvalidOperationException($"An endpoint is already attached at {address}.");
        }

        _endpointByAddress.Add(address, _endpoints.Count);
        _endpoints.Add(endpoint);
        _endpointAddresses.Add(address);
    }

    public SimAddress GetAddress(ISimulatedEndpoint endpoint) => _endpointAddresses[IndexOf(endpoint)];

    /// <summary>
    /// Moves an endpoint to a new address (NAT rebinding when only the port changes, migration when the host does).
    /// Datagrams already in flight to the old address find no endpoint there.
    /// </summary>
    public void Rebind(ISimulatedEndpoint endpoint, SimAddress newAddress)
    {
        int index = IndexOf(endpoint);
        if (_endpointByAddress.TryGetValue(newAddress, out int other) && other != index)
        {
            throw new InvalidOperationException($"An endpoint is already attached at {newAddress}.");
        }

        _endpointByAddress.Remove(_endpointAddresses[index]);
        _endpointAddresses[index] = newAddress;
        _endpointByAddress[newAddress] = index;
    }

    /// <summary>Joins two hosts. <paramref name="bToA"/> defaults to a copy of <paramref name="aToB"/> (a symmetric link).</summary>
    public SimulatedLink Connect(int hostA, int hostB, LinkConditions aToB, LinkConditions? bToA = null)
    {
        ArgumentNullException.ThrowIfNull(aToB);
        if (hostA == hostB)
        {
            throw new ArgumentException("A link joins two different hosts.");
        }

        if (_routes.ContainsKey((hostA, hostB)) || _routes.ContainsKey((hostB, hostA)))
        {
            throw new InvalidOperationException($"Hosts {hostA} and {hostB} are already linked.");
        }

        var forward = new SimulatedLinkDirection(_nextDirectionId++, hostA, hostB, aToB);
        var backward = new SimulatedLinkDirection(_nextDirectionId++, hostB, hostA, bToA ?? aToB.Clone());
        _routes.Add((hostA, hostB), forward);
        _routes.Add((hostB, hostA), backward);
        var link = new SimulatedLink(forward, backward);
        _links.Add(link);
        return link;
    }

    /// <summary>The direction used from <paramref name="fromHost"/> to <paramref name="toHost"/>, or null.</summary>
    public SimulatedLinkDirection? GetDirection(int fromHost, int toHost)
        => _routes.TryGetValue((fromHost, toHost), out SimulatedLinkDirection? direction) ? direction : null;

    /// <summary>
    /// Sends a datagram through the link from <paramref name="from"/>'s host to <paramref name="to"/>'s host at the
    /// current time, exactly as if an endpoint at <paramref name="from"/> had sent it (so spoofed sources are possible).
    /// </summary>
    public void Send(SimAddress from, SimAddress to, ReadOnlySpan<byte> datagram, byte ecn = 0)
    {
        if (!_routes.TryGetValue((from.Host, to.Host), out SimulatedLinkDirection? direction))
        {
            NoRouteDrops++;
            Record(SimTraceKind.Dropped, -1, datagram, DropCause.NoRoute);
            return;
        }

        SendOnLink(direction, from, to, datagram, ecn);
    }

    /// <summary>Schedules a datagram to arrive at <paramref name="atUs"/> bypassing every link (an off-path attacker, a replay).</summary>
    public void Inject(SimAddress from, SimAddress to, ReadOnlySpan<byte> datagram, long atUs)
    {
        byte[] buffer = Rent(datagram);
        Schedule(Math.Max(atUs, NowUs), new PendingDelivery(buffer, datagram.Length, from, to, null, -1, IsCopy: true));
    }

    /// <summary>Runs until <paramref name="condition"/> holds, checked before the first and after every event.</summary>
    /// <param name="condition">Evaluated between events; it may act on the endpoints (they are polled after every event).</param>
    /// <param name="maxTimeUs">ABSOLUTE virtual time bound: events scheduled at or before it run, later ones do not.</param>
    public SimRunResult RunUntil(Func<bool> condition, long maxTimeUs)
    {
        ArgumentNullException.ThrowIfNull(condition);
        long budget = MaxEventsPerRun;
        if (!PollAll(ref budget))
        {
            return SimRunResult.EventLimit;
        }

        while (true)
        {
            if (condition())
            {
                return SimRunResult.ConditionMet;
            }

            if (budget <= 0)
            {
                return SimRunResult.EventLimit;
            }

            long nextDeliveryUs = _queue.TryPeek(out _, out (long TimeUs, long Sequence) priority) ? priority.TimeUs : long.MaxValue;
            long nextTimerUs = long.MaxValue;
            int timerOwner = -1;
            for (int i = 0; i < _endpoints.Count; i++)
            {
                long timeoutUs = _endpoints[i].NextTimeoutUs;
                if (timeoutUs < nextTimerUs)
                {
                    nextTimerUs = timeoutUs;
                    timerOwner = i;
                }
            }

            long nextUs = Math.Min(nextDeliveryUs, nextTimerUs);
            if (nextUs == long.MaxValue)
            {
                AdvanceTo(maxTimeUs);
                return SimRunResult.Idle;
            }

            if (nextUs > maxTimeUs)
            {
                AdvanceTo(maxTimeUs);
                return SimRunResult.TimeLimit;
            }

            // A timer already in the past fires now: the clock never goes backwards.
            AdvanceTo(nextUs);
            budget--;
            TotalEvents++;
            if (nextDeliveryUs <= nextTimerUs)
            {
                Deliver(_queue.Dequeue());
            }
            else
            {
                _endpoints[timerOwner].OnTimeout(NowUs);
            }

            if (!PollAll(ref budget))
            {
                return condition() ? SimRunResult.ConditionMet : SimRunResult.EventLimit;
            }
        }
    }

    /// <summary>Runs for <paramref name="durationUs"/> of virtual time; the clock ends exactly at start + duration.</summary>
    public SimRunResult RunFor(long durationUs)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(durationUs);
        long endUs = NowUs > long.MaxValue - durationUs ? long.MaxValue : NowUs + durationUs;
        return RunUntil(static () => false, endUs);
    }

    /// <summary>Polls every endpoint's TrySend until it returns false (done automatically by the run loop).</summary>
    public void PollAll()
    {
        long budget = MaxEventsPerRun;
        if (!PollAll(ref budget))
        {
            throw new InvalidOperationException("An endpoint kept sending without end.");
        }
    }

    /// <summary>FNV-1a over the whole trace: equal runs give equal fingerprints.</summary>
    public ulong TraceFingerprint()
    {
        ulong hash = 14695981039346656037UL;
        foreach (SimTraceEntry entry in _trace)
        {
            hash = Mix(hash, (ulong)entry.TimeUs);
            hash = Mix(hash, (ulong)entry.Kind);
            hash = Mix(hash, (ulong)(long)entry.DirectionId);
            hash = Mix(hash, (ulong)entry.Length);
            hash = Mix(hash, (ulong)entry.Cause);
            hash = Mix(hash, entry.ContentHash);
        }

        return hash;

        static ulong Mix(ulong hash, ulong value)
        {
            for (int i = 0; i < 8; i++)
            {
                hash = (hash ^ (byte)(value >> (8 * i))) * 1099511628211UL;
            }

            return hash;
        }
    }

    private bool PollAll(ref long budget)
    {
        for (int i = 0; i < _endpoints.Count; i++)
        {
            ISimulatedEndpoint endpoint = _endpoints[i];
            while (true)
            {
                if (budget <= 0)
                {
                    return false;
                }

                if (!endpoint.TrySend(_sendBuffer, NowUs, out int written, out SimAddress to))
                {
                    break;
                }

                if ((uint)written > (uint)_sendBuffer.Length)
                {
                    throw new InvalidOperationException($"Endpoint {i} reported {written} bytes written into a {_sendBuffer.Length}-byte buffer.");
                }

                budget--;
                TotalEvents++;

                // The source is looked up again each time: a send may follow a Rebind done inside TrySend.
                SimAddress from = endpoint is IMultiPathSimulatedEndpoint { LastSentFrom: SimAddress other } ? other : _endpointAddresses[i];
                Send(from, to, _sendBuffer.AsSpan(0, written), endpoint is IEcnSimulatedEndpoint ecn ? ecn.LastSentEcn : (byte)0);
            }
        }

        return true;
    }

    private void SendOnLink(SimulatedLinkDirection direction, SimAddress from, SimAddress to, ReadOnlySpan<byte> datagram, byte ecn = 0)
    {
        LinkStatistics stats = direction.Statistics;
        long index = stats.SentDatagrams;
        stats.SentDatagrams++;
        stats.SentBytes += datagram.Length;
        Record(SimTraceKind.Sent, direction.Id, datagram, DropCause.None);

        byte[] buffer = Rent(datagram);
        int length = datagram.Length;
        long interceptDelayUs = 0;
        long replayAfterUs = -1;

        DatagramInterceptor? interceptor = Interceptor;
        if (interceptor is not null)
        {
            _intercepted.Reset(buffer, length, from, to, direction, index, NowUs);
            InterceptAction action;
            try
            {
                action = interceptor(_intercepted);
            }
            finally
            {
                length = _intercepted.Length;
                buffer = _intercepted.TakeBuffer();
            }

            switch (action.Kind)
            {
                case InterceptActionKind.Drop:
                    DropOnLink(direction, buffer, length, DropCause.Interceptor);
                    return;
                case InterceptActionKind.Delay:
                    interceptDelayUs = Math.Max(0, action.DelayUs);
                    break;
                case InterceptActionKind.Replay:
                    replayAfterUs = Math.Max(0, action.DelayUs);
                    break;
            }
        }

        LinkConditions conditions = direction.Conditions;
        if (length > conditions.MaxDatagramSize)
        {
            DropOnLink(direction, buffer, length, DropCause.TooLarge);
            return;
        }

        long departureUs = NowUs;
        if (conditions.BandwidthBitsPerSecond > 0)
        {
            direction.DrainQueue(NowUs);
            if (direction.QueuedBytes + length > conditions.QueueLimitBytes)
            {
                DropOnLink(direction, buffer, length, DropCause.QueueOverflow);
                return;
            }

            // Busy time is kept exactly in units of 1/rate µs (bits·10^6), so per-datagram rounding never accumulates:
            // the long-run rate equals the configured one and only each departure is rounded up to a whole µs.
            Int128 rate = conditions.BandwidthBitsPerSecond;
            Int128 startScaled = Int128.Max((Int128)NowUs * rate, direction.BusyUntilScaled);
            direction.BusyUntilScaled = startScaled + (Int128)length * 8 * 1_000_000;
            departureUs = (long)((direction.BusyUntilScaled + rate - 1) / rate);
            direction.Enqueue(departureUs, length);
        }

        if (direction.PendingForcedDrops > 0)
        {
            direction.PendingForcedDrops--;
            DropOnLink(direction, buffer, length, DropCause.BurstLoss);
            return;
        }

        if (conditions.BurstLoss is GilbertElliottLoss burst)
        {
            double transition = Random.NextDouble();
            if (direction.InBadState ? transition < burst.BadToGood : transition < burst.GoodToBad)
            {
                direction.InBadState = !direction.InBadState;
            }

            double lossProbability = direction.InBadState ? burst.LossInBad : burst.LossInGood;
            if (lossProbability > 0 && Random.NextDouble() < lossProbability)
            {
                DropOnLink(direction, buffer, length, DropCause.BurstLoss);
                return;
            }
        }

        if (conditions.LossProbability > 0 && Random.NextDouble() < conditions.LossProbability)
        {
            DropOnLink(direction, buffer, length, DropCause.RandomLoss);
            return;
        }

        long arrivalUs = departureUs + conditions.DelayUs;
        if (conditions.JitterUs > 0)
        {
            arrivalUs += Random.NextInt64(0, conditions.JitterUs + 1);
        }

        if (!conditions.AllowJitterReordering)
        {
            arrivalUs = Math.Max(arrivalUs, direction.LastInOrderArrivalUs);
        }

        bool reordered = conditions.ReorderProbability > 0 && Random.NextDouble() < conditions.ReorderProbability;
        if (reordered)
        {
            stats.Reordered++;
            arrivalUs += conditions.ReorderExtraDelayUs;
        }
        else if (interceptDelayUs == 0)
        {
            direction.LastInOrderArrivalUs = arrivalUs;
        }

        arrivalUs += interceptDelayUs;

        if (conditions.BleachEcn) ecn = 0;
        else if (ecn != 0 && ecn != 0b11 && conditions.RemarkEcnTo is byte remark) ecn = remark;
        if (ecn is 0b01 or 0b10 && conditions.CeMarkProbability > 0 && Random.NextDouble() < conditions.CeMarkProbability) ecn = 0b11;

        if (conditions.DuplicationProbability > 0 && Random.NextDouble() < conditions.DuplicationProbability)
        {
            stats.Duplicated++;
            byte[] copy = Rent(buffer.AsSpan(0, length));
            Schedule(arrivalUs + conditions.DuplicateExtraDelayUs, new PendingDelivery(copy, length, from, to, direction, index, IsCopy: true, ecn));
        }

        if (replayAfterUs >= 0)
        {
            stats.Replayed++;
            byte[] copy = Rent(buffer.AsSpan(0, length));
            Schedule(arrivalUs + replayAfterUs, new PendingDelivery(copy, length, from, to, direction, index, IsCopy: true, ecn));
        }

        if (length > 0 && conditions.CorruptionProbability > 0 && Random.NextDouble() < conditions.CorruptionProbability)
        {
            stats.Corrupted++;
            int bit = Random.Next(length * 8);
            buffer[bit >> 3] ^= (byte)(1 << (bit & 7));
        }

        Schedule(arrivalUs, new PendingDelivery(buffer, length, from, to, direction, index, IsCopy: false, ecn));
    }

    private void Deliver(PendingDelivery delivery)
    {
        ReadOnlySpan<byte> data = delivery.Buffer.AsSpan(0, delivery.Length);
        SimulatedLinkDirection? direction = delivery.Direction;
        int directionId = direction?.Id ?? -1;
        if (!_endpointByAddress.TryGetValue(delivery.To, out int endpointIndex))
        {
            if (direction is null)
            {
                UnlinkedNoEndpointDrops++;
            }
            else
            {
                direction.Statistics.CountDrop(DropCause.NoEndpoint);
            }

            Record(SimTraceKind.Dropped, directionId, data, DropCause.NoEndpoint);
            ArrayPool<byte>.Shared.Return(delivery.Buffer);
            return;
        }

        if (direction is not null)
        {
            LinkStatistics stats = direction.Statistics;
            stats.DeliveredDatagrams++;
            stats.DeliveredBytes += delivery.Length;
            if (!delivery.IsCopy)
            {
                if (delivery.Index < direction.HighestDeliveredIndex)
                {
                    stats.DeliveredOutOfOrder++;
                }
                else
                {
                    direction.HighestDeliveredIndex = delivery.Index;
                }
            }
        }

        Record(SimTraceKind.Delivered, directionId, data, DropCause.None);
        try
        {
            if (_endpoints[endpointIndex] is IEcnSimulatedEndpoint ecnEndpoint) ecnEndpoint.Receive(data, delivery.From, delivery.Ecn, NowUs);
            else _endpoints[endpointIndex].Receive(data, delivery.From, NowUs);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(delivery.Buffer);
        }
    }

    private void DropOnLink(SimulatedLinkDirection direction, byte[] buffer, int length, DropCause cause)
    {
        direction.Statistics.CountDrop(cause);
        Record(SimTraceKind.Dropped, direction.Id, buffer.AsSpan(0, length), cause);
        ArrayPool<byte>.Shared.Return(buffer);
    }

    private void Schedule(long timeUs, PendingDelivery delivery) => _queue.Enqueue(delivery, (timeUs, _sequence++));

    private void AdvanceTo(long timeUs)
    {
        if (timeUs > NowUs)
        {
            NowUs = timeUs;
        }
    }

    private void Record(SimTraceKind kind, int directionId, ReadOnlySpan<byte> data, DropCause cause)
    {
        if (!TraceEnabled)
        {
            return;
        }

        uint hash = 2166136261;
        foreach (byte b in data)
        {
            hash = (hash ^ b) * 16777619;
        }

        _trace.Add(new SimTraceEntry(NowUs, kind, directionId, data.Length, cause, hash));
    }

    private int IndexOf(ISimulatedEndpoint endpoint)
    {
        for (int i = 0; i < _endpoints.Count; i++)
        {
            if (ReferenceEquals(_endpoints[i], endpoint))
            {
                return i;
            }
        }

        throw new InvalidOperationException("The endpoint is not attached to this network.");
    }

    private static byte[] Rent(ReadOnlySpan<byte> data)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Max(1, data.Length));
        data.CopyTo(buffer);
        return buffer;
    }
}
