using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Child-process side of <see cref="WireStats"/>: snapshots the counters once the connection is set up (after the
/// handshake), counts operations, and at GlobalCleanup divides the difference by the operations run (pilot, warmup
/// and measured iterations alike: each is the same operation).
/// </summary>
internal sealed class WireStatsRecorder
{
    private readonly long _datagrams;
    private readonly long _bytes;
    private readonly long _lost;
    private long _operations;

    public WireStatsRecorder()
    {
        _datagrams = QuicTelemetryCounters.DatagramsSent;
        _bytes = QuicTelemetryCounters.BytesSent;
        _lost = QuicTelemetryCounters.PacketsLost;
    }

    public void Count(int operations = 1) => _operations += operations;

    public void Save(string type, string method, string parameters)
    {
        if (_operations == 0) return;
        double ops = _operations;
        new WireStats(
            (QuicTelemetryCounters.DatagramsSent - _datagrams) / ops,
            (QuicTelemetryCounters.PacketsLost - _lost) / ops,
            (QuicTelemetryCounters.BytesSent - _bytes) / ops,
            _operations).Save(type, method, parameters);
    }
}
