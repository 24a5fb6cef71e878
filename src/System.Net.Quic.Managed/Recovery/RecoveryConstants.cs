namespace System.Net.Quic.Managed.Recovery;

/// <summary>Constants of RFC 9002 Appendix A.2 and B.2, in microseconds where they are times.</summary>
internal static class RecoveryConstants
{
    /// <summary>kPacketThreshold. RFC 9002 §6.1.1.</summary>
    public const long PacketThreshold = 3;

    /// <summary>kTimeThreshold = 9/8, as numerator/denominator for integer math. RFC 9002 §6.1.2.</summary>
    public const long TimeThresholdNumerator = 9;
    public const long TimeThresholdDenominator = 8;

    /// <summary>kGranularity = 1 ms. RFC 9002 §6.1.2.</summary>
    public const long GranularityUs = 1_000;

    /// <summary>kInitialRtt = 333 ms. RFC 9002 §6.2.2.</summary>
    public const long InitialRttUs = 333_000;

    /// <summary>kPersistentCongestionThreshold. RFC 9002 §7.6.1.</summary>
    public const long PersistentCongestionThreshold = 3;

    /// <summary>Default max_ack_delay (25 ms) when the peer sends none. RFC 9000 §18.2.</summary>
    public const long DefaultMaxAckDelayUs = 25_000;

    /// <summary>Sentinel for "no deadline".</summary>
    public const long NoTime = long.MaxValue;

    /// <summary>Initial window: min(10 * mds, max(14720, 2 * mds)). RFC 9002 §7.2.</summary>
    public static long InitialWindow(int maxDatagramSize) => Math.Min(10L * maxDatagramSize, Math.Max(14_720L, 2L * maxDatagramSize));

    /// <summary>Minimum window: 2 * mds. RFC 9002 §7.2.</summary>
    public static long MinimumWindow(int maxDatagramSize) => 2L * maxDatagramSize;
}
