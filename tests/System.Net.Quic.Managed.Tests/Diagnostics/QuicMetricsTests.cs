using System.Diagnostics.Metrics;
using System.Net.Quic.Managed.Diagnostics;
using System.Text.RegularExpressions;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

/// <summary>The System.Diagnostics.Metrics side of the diagnostics: what a MeterListener (OpenTelemetry, dotnet-counters) finds.</summary>
[Collection(nameof(TelemetryCollection))]
public class QuicMetricsTests
{
    /// <summary>
    /// Name, unit and kind of every instrument. Names follow the OpenTelemetry/.NET conventions (lower case, dot
    /// namespaces, snake_case words); units are UCUM: "By" for bytes, "s" for durations, "{thing}" for counts.
    /// </summary>
    private static readonly (string Name, string Unit, Type Kind)[] s_expected =
    {
        ("quic.connection.active", "{connection}", typeof(ObservableUpDownCounter<long>)),
        ("quic.handshake.completed", "{handshake}", typeof(ObservableCounter<long>)),
        ("quic.handshake.failed", "{handshake}", typeof(ObservableCounter<long>)),
        ("quic.datagrams.sent", "{datagram}", typeof(ObservableCounter<long>)),
        ("quic.datagrams.received", "{datagram}", typeof(ObservableCounter<long>)),
        ("quic.bytes.sent", "By", typeof(ObservableCounter<long>)),
        ("quic.bytes.received", "By", typeof(ObservableCounter<long>)),
        ("quic.packets.lost", "{packet}", typeof(ObservableCounter<long>)),
        ("quic.bytes.retransmitted", "By", typeof(ObservableCounter<long>)),
        ("quic.rtt.smoothed", "s", typeof(ObservableGauge<double>)),
        ("quic.congestion_window", "By", typeof(ObservableGauge<double>)),
    };

    [Fact]
    public void MeterListenerFindsEveryInstrumentWithConventionalNameAndUnit()
    {
        QuicMetrics.EnsureInitialized();
        var published = new List<Instrument>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, _) =>
        {
            if (instrument.Meter.Name == "System.Net.Quic.Managed") published.Add(instrument);
        };
        listener.Start();

        Assert.Equal(s_expected.Select(e => e.Name).Order(StringComparer.Ordinal), published.Select(i => i.Name).Order(StringComparer.Ordinal));
        foreach ((string name, string unit, Type kind) in s_expected)
        {
            Instrument instrument = published.Single(i => i.Name == name);
            Assert.Equal(unit, instrument.Unit);
            Assert.IsType(kind, instrument);
            Assert.False(string.IsNullOrEmpty(instrument.Description));
            Assert.Matches(new Regex("^quic(\\.[a-z][a-z_]*)+$"), name);
        }
    }

    [Fact]
    public void InstrumentsExistOnceTheLibraryKeepsStatistics()
    {
        // Nothing in the app calls QuicMetrics: touching the statistics (as the first connection does) creates the Meter.
        _ = QuicTelemetryCounters.ActiveConnections;
        Assert.Equal("System.Net.Quic.Managed", QuicMetrics.Meter.Name);
        bool found = false;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, _) => found |= instrument.Meter.Name == "System.Net.Quic.Managed";
        listener.Start();
        Assert.True(found);
    }

    [Fact]
    public void SmoothedRttGaugeIsInSeconds()
    {
        double value = double.NaN;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "System.Net.Quic.Managed" && instrument.Name == "quic.rtt.smoothed") l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<double>((_, v, _, _) => value = v);
        listener.Start();
        QuicTelemetryCounters.UpdatePathSample(0, 0, 250_000, 12_000); // one more connection with a 250 ms RTT
        try
        {
            // Connections of earlier tests may still be closing on their driver threads and move the process-wide mean:
            // compare against a reading that did not change around the observation.
            bool compared = false;
            for (int attempt = 0; attempt < 50 && !compared; attempt++)
            {
                double before = QuicTelemetryCounters.MeanSmoothedRttMs;
                listener.RecordObservableInstruments();
                if (before != QuicTelemetryCounters.MeanSmoothedRttMs) continue;
                Assert.Equal(before / 1000.0, value, 9);
                compared = true;
            }
            Assert.True(compared, "the mean RTT kept changing while it was observed");
            Assert.True(value > 0, "with our 250 ms sample the mean cannot be zero"); // other (simulated) connections may still count: no upper bound
        }
        finally
        {
            QuicTelemetryCounters.RemovePathSample(250_000, 12_000);
        }
    }
}
