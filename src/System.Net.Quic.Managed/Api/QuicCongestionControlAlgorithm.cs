namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: the congestion controller of a connection
/// (<see cref="QuicConnectionOptions.CongestionControlAlgorithm"/>). Managed provider only.
/// </summary>
public enum QuicCongestionControlAlgorithm
{
    /// <summary>CUBIC (RFC 9438), the default.</summary>
    Cubic = 0,

    /// <summary>NewReno as specified for QUIC (RFC 9002 §7).</summary>
    NewReno = 1,

    /// <summary>BBR version 3 (draft-ietf-ccwg-bbr): paces at the measured bottleneck bandwidth and reacts to loss only
    /// above 2 % per round, so random (non-congestive) loss costs far less throughput than with CUBIC or NewReno.</summary>
    Bbr = 2,
}
