namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// Per-connection protocol events for tracing (qlog). The core calls it only when a tracer is set, so tracing costs
/// nothing otherwise. Times are the core's microseconds; frame types are RFC 9000 §19 type values.
/// </summary>
internal interface IConnectionTracer : IDisposable
{
    void PacketSent(long nowUs, string packetType, long packetNumber, int length, ReadOnlySpan<ulong> frameTypes);

    void PacketReceived(long nowUs, string packetType, long packetNumber, int length, ReadOnlySpan<ulong> frameTypes);

    void PacketLost(long nowUs, string packetType, long packetNumber);

    void MetricsUpdated(long nowUs, long smoothedRttUs, long latestRttUs, long congestionWindow, long bytesInFlight);

    void KeyUpdated(long nowUs, int generation);

    void ConnectionClosed(long nowUs, bool byPeer, bool application, ulong errorCode, string? reason);
}
