using System.Diagnostics.CodeAnalysis;
using System.Reflection;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>
/// Reads the managed stack's process-wide counters (internal QuicTelemetryCounters: the source of its EventCounters
/// and Meter) by reflection, as this tool has no InternalsVisibleTo and the Meter is only published once the library
/// initialises its metrics. Counts both ends: client and server share the process.
/// </summary>
public sealed class ManagedWireCounters
{
    private const DynamicallyAccessedMemberTypes Properties = DynamicallyAccessedMemberTypes.PublicProperties | DynamicallyAccessedMemberTypes.NonPublicProperties;

    private readonly Func<long>? _datagramsSent;
    private readonly Func<long>? _bytesSent;
    private readonly Func<long>? _packetsLost;
    private readonly Func<double>? _rttMs;
    private readonly Func<double>? _cwnd;

    public ManagedWireCounters()
    {
        // A literal assembly-qualified name: the trimmer (PublishTrimmed) sees it and keeps the type and its properties.
        Type? counters = Type.GetType("System.Net.Quic.Managed.Diagnostics.QuicTelemetryCounters, System.Net.Quic.Managed");
        _datagramsSent = Getter(counters, "DatagramsSent");
        _bytesSent = Getter(counters, "BytesSent");
        _packetsLost = Getter(counters, "PacketsLost");
        _rttMs = DoubleGetter(counters, "MeanSmoothedRttMs");
        _cwnd = DoubleGetter(counters, "MeanCongestionWindow");
    }

    /// <summary>Datagrams sent, UDP payload bytes sent, packets declared lost; null when the counters are not found.</summary>
    public (long Datagrams, long Bytes, long Lost)? Read()
        => _datagramsSent is null || _bytesSent is null || _packetsLost is null
            ? null
            : (_datagramsSent(), _bytesSent(), _packetsLost());

    /// <summary>Mean smoothed RTT (ms) and congestion window (bytes) over the open connections; null when not found.</summary>
    public (double RttMs, double CongestionWindow)? ReadPath()
        => _rttMs is null || _cwnd is null ? null : (_rttMs(), _cwnd());

    private static Func<double>? DoubleGetter([DynamicallyAccessedMembers(Properties)] Type? type, string property)
    {
        MethodInfo? getter = type?.GetProperty(property, BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)?.GetMethod;
        return getter is null || getter.ReturnType != typeof(double) ? null : getter.CreateDelegate<Func<double>>();
    }

    private static Func<long>? Getter([DynamicallyAccessedMembers(Properties)] Type? type, string property)
    {
        MethodInfo? getter = type?.GetProperty(property, BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)?.GetMethod;
        return getter is null || getter.ReturnType != typeof(long) ? null : getter.CreateDelegate<Func<long>>();
    }
}
