namespace System.Net.Quic.Managed.Recovery;

/// <summary>Whether the sender was using its congestion window. RFC 9002 §7.8 (underutilizing the window),
/// RFC 9438 §5.8 (application-limited flows).</summary>
internal static class CongestionWindowLimits
{
    // Slack for a window not filled because the next packet did not fit (Linux tcp_is_cwnd_limited uses a similar margin).
    private const int SlackPackets = 3;

    public static bool IsCwndLimited(long priorBytesInFlight, long congestionWindow, bool inSlowStart, int maxDatagramSize)
    {
        if (priorBytesInFlight >= congestionWindow)
        {
            return true;
        }

        // In slow start the window doubles per RTT, so a sender using more than half of it is keeping up.
        if (inSlowStart && priorBytesInFlight > congestionWindow / 2)
        {
            return true;
        }

        return congestionWindow - priorBytesInFlight <= (long)SlackPackets * maxDatagramSize;
    }
}
