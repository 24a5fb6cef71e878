using System.Threading;

namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// Process-wide statistics behind both the EventCounters of <see cref="QuicEventSource"/> and the instruments of
/// <see cref="QuicMetrics"/>. Updated with interlocked adds (no allocation, no lock); smoothed RTT and congestion
/// window are kept as sums over open connections, each connection reporting only its change.
/// </summary>
internal static class QuicTelemetryCounters
{
    private static long s_activeConnections;
    private static long s_connectionsStarted;
    private static long s_handshakesCompleted;
    private static long s_handshakeFailures;
    private static long s_datagramsSent;
    private static long s_datagramsReceived;
    private static long s_bytesSent;
    private static long s_bytesReceived;
    private static long s_packetsLost;
    private static long s_bytesRetransmitted;
    private static long s_smoothedRttSumUs;
    private static long s_congestionWindowSum;
    private static long s_rttReporters;

    /// <summary>
    /// The Meter's instruments exist from the moment the library keeps statistics (the first connection): a
    /// MeterListener or dotnet-counters attached to a running process finds them without the app doing anything.
    /// </summary>
    static QuicTelemetryCounters() => QuicMetrics.EnsureInitialized();

    public static long ActiveConnections => Volatile.Read(ref s_activeConnections);
    public static long ConnectionsStarted => Volatile.Read(ref s_connectionsStarted);
    public static long HandshakesCompleted => Volatile.Read(ref s_handshakesCompleted);
    public static long HandshakeFailures => Volatile.Read(ref s_handshakeFailures);
    public static long DatagramsSent => Volatile.Read(ref s_datagramsSent);
    public static long DatagramsReceived => Volatile.Read(ref s_datagramsReceived);
    public static long BytesSent => Volatile.Read(ref s_bytesSent);
    public static long BytesReceived => Volatile.Read(ref s_bytesReceived);
    public static long PacketsLost => Volatile.Read(ref s_packetsLost);
    public static long BytesRetransmitted => Volatile.Read(ref s_bytesRetransmitted);

    /// <summary>Mean smoothed RTT of the open connections that have an RTT sample, in milliseconds.</summary>
    public static double MeanSmoothedRttMs
    {
        get
        {
            long n = Volatile.Read(ref s_rttReporters);
            return n <= 0 ? 0 : Volatile.Read(ref s_smoothedRttSumUs) / (double)n / 1000.0;
        }
    }

    /// <summary>Mean congestion window of the open connections with a sample, in bytes.</summary>
    public static double MeanCongestionWindow
    {
        get
        {
            long n = Volatile.Read(ref s_rttReporters);
            return n <= 0 ? 0 : Volatile.Read(ref s_congestionWindowSum) / (double)n;
        }
    }

    public static void ConnectionStarted()
    {
        Interlocked.Increment(ref s_activeConnections);
        Interlocked.Increment(ref s_connectionsStarted);
    }

    public static void ConnectionEnded() => Interlocked.Decrement(ref s_activeConnections);

    public static void HandshakeCompleted() => Interlocked.Increment(ref s_handshakesCompleted);

    public static void HandshakeFailed() => Interlocked.Increment(ref s_handshakeFailures);

    public static void DatagramSent(int bytes)
    {
        Interlocked.Increment(ref s_datagramsSent);
        Interlocked.Add(ref s_bytesSent, bytes);
    }

    public static void DatagramReceived(int bytes)
    {
        Interlocked.Increment(ref s_datagramsReceived);
        Interlocked.Add(ref s_bytesReceived, bytes);
    }

    public static void PacketsLostAdd(int packets, long bytesToRetransmit)
    {
        Interlocked.Add(ref s_packetsLost, packets);
        Interlocked.Add(ref s_bytesRetransmitted, bytesToRetransmit);
    }

    /// <summary>
    /// A connection's RTT/cwnd changed. Pass the previous values it reported (0, 0 the first time) so the sums stay
    /// exact; call <see cref="RemovePathSample"/> with the last values when the connection ends.
    /// </summary>
    public static void UpdatePathSample(long previousRttUs, long previousCwnd, long rttUs, long cwnd)
    {
        if (previousRttUs == 0 && previousCwnd == 0) Interlocked.Increment(ref s_rttReporters);
        Interlocked.Add(ref s_smoothedRttSumUs, rttUs - previousRttUs);
        Interlocked.Add(ref s_congestionWindowSum, cwnd - previousCwnd);
    }

    public static void RemovePathSample(long lastRttUs, long lastCwnd)
    {
        if (lastRttUs == 0 && lastCwnd == 0) return;
        Interlocked.Decrement(ref s_rttReporters);
        Interlocked.Add(ref s_smoothedRttSumUs, -lastRttUs);
        Interlocked.Add(ref s_congestionWindowSum, -lastCwnd);
    }
}
