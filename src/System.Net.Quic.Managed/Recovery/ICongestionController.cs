namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// A window-based congestion controller. RFC 9002 §7. Sizes are bytes, times microseconds. The controller owns
/// bytes_in_flight: every in-flight packet is added by <see cref="OnPacketSent"/> and removed exactly once by
/// <see cref="OnPacketsAcked"/>, <see cref="OnPacketsLost"/> or <see cref="OnPacketsDiscarded"/>.
/// </summary>
internal interface ICongestionController
{
    int MaxDatagramSize { get; }

    long CongestionWindow { get; }

    long BytesInFlight { get; }

    /// <summary>long.MaxValue until the first congestion event.</summary>
    long SlowStartThreshold { get; }

    bool InSlowStart { get; }

    /// <summary>congestion_recovery_start_time; long.MinValue when no recovery period has started.</summary>
    long RecoveryStartTimeUs { get; }

    /// <summary>cwnd - bytes_in_flight, never negative.</summary>
    long AvailableWindow { get; }

    /// <summary>RFC 9002 §7: a packet may be sent if it does not take bytes_in_flight over the window
    /// (PTO probes are exempt and are the caller's decision).</summary>
    bool CanSend(int bytes);

    /// <summary>A packet sent at or before the start of the current recovery period. RFC 9002 B.4 InCongestionRecovery.</summary>
    bool IsInRecovery(long timeSentUs);

    /// <summary>An in-flight packet was sent. RFC 9002 B.4 OnPacketSentCC.</summary>
    void OnPacketSent(int bytes, long nowUs);

    /// <summary>
    /// In-flight packets were newly acknowledged by one ACK frame. RFC 9002 B.5 OnPacketsAcked.
    /// </summary>
    /// <param name="ackedBytes">Sum of their sizes.</param>
    /// <param name="largestAckedTimeSentUs">Send time of the largest of them: the window grows only if it was sent
    /// after the recovery period started (RFC 9002 §7.3.2: an acknowledgment of such a packet ends recovery).</param>
    /// <param name="priorBytesInFlight">bytes_in_flight before this ACK was processed: when the sender was not using
    /// the window (application or flow-control limited) the window does not grow. RFC 9002 §7.8, RFC 9438 §5.8.</param>
    /// <param name="nowUs">Current time.</param>
    /// <param name="rtt">RTT estimates (CUBIC uses smoothed_rtt).</param>
    void OnPacketsAcked(long ackedBytes, long largestAckedTimeSentUs, long priorBytesInFlight, long nowUs, RttEstimator rtt);

    /// <summary>In-flight packets were declared lost: removes them from bytes_in_flight (the congestion reaction is
    /// <see cref="OnCongestionEvent"/>). RFC 9002 B.8.</summary>
    void OnPacketsLost(long lostBytes);

    /// <summary>Loss or ECN-CE: reduce the window once per recovery period. RFC 9002 B.6, RFC 9438 §4.6.</summary>
    void OnCongestionEvent(long timeSentUs, long nowUs);

    /// <summary>Collapse to the minimum window. RFC 9002 §7.6.2.</summary>
    void OnPersistentCongestion(long nowUs);

    /// <summary>Packets of a discarded packet number space leave bytes_in_flight without a congestion signal. RFC 9002 §6.4.</summary>
    void OnPacketsDiscarded(long bytes);

    /// <summary>
    /// The connection moved to a new path (another peer host, or another local address; RFC 9000 §9.4: the congestion
    /// controller restarts unless only the peer's port changed): back to the initial window, slow start and no path
    /// model. Bytes already in flight stay counted (their acknowledgments and losses still arrive).
    /// </summary>
    void OnNewPath();
}
