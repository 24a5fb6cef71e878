using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Diagnostics;
using BenchmarkDotNet.Attributes;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Diagnostics must cost nothing when nobody listens. Measures the per-datagram diagnostics calls the endpoint
/// makes (the verbose datagram event guard and the interlocked counters) with no listener attached, against an empty
/// baseline: the difference is the hot-path cost, and the allocation column must read 0 B.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 10)]
public class DiagnosticsOverheadBenchmarks
{
    private readonly byte[] _datagram = new byte[1200];
    private readonly NetworkAddress _remote = NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Loopback, 4433));

    [Benchmark(Baseline = true)]
    public int NoDiagnostics() => _datagram.Length;

    /// <summary>What Endpoint.Receive does per datagram when no EventListener/EventPipe session is attached.</summary>
    [Benchmark]
    public int DatagramEventWithoutListener()
    {
        if (QuicEventSource.Log.DatagramsEnabled)
        {
            QuicEventSource.Log.OnDatagram(false, "c", _datagram, 0, "", _remote.ToString());
        }
        return _datagram.Length;
    }

    /// <summary>What a stream open or close does when nobody listens (Connection.TraceStreamOpened/Closed guard).</summary>
    [Benchmark]
    public int StreamEventWithoutListener()
    {
        if (QuicEventSource.Log.InformationalEnabled)
        {
            QuicEventSource.Log.StreamOpened("c", 4, locallyInitiated: true);
        }
        return _datagram.Length;
    }

    /// <summary>The always-on counters behind EventCounters and the Meter (two interlocked adds per datagram).</summary>
    [Benchmark]
    public int CountersPerDatagram()
    {
        QuicTelemetryCounters.DatagramReceived(_datagram.Length);
        return _datagram.Length;
    }
}
