using System.Diagnostics.Metrics;

namespace System.Net.Quic.Managed.Diagnostics;

/// <summary>
/// The same statistics as <see cref="QuicEventSource"/>'s counters, as System.Diagnostics.Metrics instruments on a
/// Meter named <c>System.Net.Quic.Managed</c> (the convention .NET 8+ networking follows; OpenTelemetry and
/// <c>dotnet-counters</c> read it). Observable instruments: they cost nothing until a listener collects.
/// </summary>
internal static class QuicMetrics
{
    public const string MeterName = QuicEventSource.SourceName;

    public static readonly Meter Meter = new(MeterName);

    static QuicMetrics()
    {
        Meter.CreateObservableUpDownCounter("quic.connection.active", () => QuicTelemetryCounters.ActiveConnections, "{connection}", "Open QUIC connections.");
        Meter.CreateObservableCounter("quic.handshake.completed", () => QuicTelemetryCounters.HandshakesCompleted, "{handshake}", "Handshakes completed.");
        Meter.CreateObservableCounter("quic.handshake.failed", () => QuicTelemetryCounters.HandshakeFailures, "{handshake}", "Handshakes that failed.");
        Meter.CreateObservableCounter("quic.datagrams.sent", () => QuicTelemetryCounters.DatagramsSent, "{datagram}", "UDP datagrams sent.");
        Meter.CreateObservableCounter("quic.datagrams.received", () => QuicTelemetryCounters.DatagramsReceived, "{datagram}", "UDP datagrams received.");
        Meter.CreateObservableCounter("quic.bytes.sent", () => QuicTelemetryCounters.BytesSent, "By", "UDP payload bytes sent.");
        Meter.CreateObservableCounter("quic.bytes.received", () => QuicTelemetryCounters.BytesReceived, "By", "UDP payload bytes received.");
        Meter.CreateObservableCounter("quic.packets.lost", () => QuicTelemetryCounters.PacketsLost, "{packet}", "Packets declared lost.");
        Meter.CreateObservableCounter("quic.bytes.retransmitted", () => QuicTelemetryCounters.BytesRetransmitted, "By", "Bytes of lost packets queued again.");
        // OpenTelemetry semantic conventions: durations in seconds ("s"), not milliseconds (the EventCounter shows ms).
        Meter.CreateObservableGauge("quic.rtt.smoothed", () => QuicTelemetryCounters.MeanSmoothedRttMs / 1000.0, "s", "Mean smoothed RTT of open connections.");
        Meter.CreateObservableGauge("quic.congestion_window", () => QuicTelemetryCounters.MeanCongestionWindow, "By", "Mean congestion window of open connections.");
    }

    /// <summary>Creates the instruments (the static constructor does the work); QuicTelemetryCounters' static constructor calls it.</summary>
    public static void EnsureInitialized()
    {
    }
}
