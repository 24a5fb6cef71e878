namespace System.Net.Quic.Managed.Recovery;

/// <summary>Outcome of one loss-detection pass over a packet number space. RFC 9002 §6.1, §7.6.</summary>
internal struct LossDetectionResult
{
    public int LostCount;

    /// <summary>Sum of sizes of lost in-flight packets (to remove from bytes_in_flight).</summary>
    public long LostInFlightBytes;

    /// <summary>Largest send time among lost in-flight packets other than PMTU probes; long.MinValue when none (no congestion event).</summary>
    public long LargestLostInFlightTimeSentUs;

    /// <summary>Two ack-eliciting packets lost more than the persistent congestion duration apart with nothing
    /// acknowledged between them, both sent after the first RTT sample. RFC 9002 §7.6.2.</summary>
    public bool PersistentCongestion;

    public readonly bool HasCongestionEvent => LargestLostInFlightTimeSentUs != long.MinValue;
}
