using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

[Collection(nameof(TelemetryCollection))]
public class QuicEventSourceTests
{
    [Fact]
    public void SourceHasTheLibraryName()
    {
        Assert.Equal("System.Net.Quic.Managed", QuicEventSource.Log.Name);
        Assert.Equal(QuicEventSource.SourceName, QuicMetrics.MeterName);
    }

    [Fact]
    public void InformationalEventsCarryTheirPayload()
    {
        using var listener = new RecordingEventListener(EventLevel.Informational, EventKeywords.None, counters: false);
        QuicEventSource.Log.HandshakeCompleted("abcd", 1, "h3", "TLS_AES_128_GCM_SHA256", 12.5);
        QuicEventSource.Log.ConnectionClosed("abcd", 0x10a, false, true, "peer said no");
        EventWrittenEventArgs done = Assert.Single(listener.Events, e => e.EventName == "HandshakeCompleted");
        Assert.Equal("abcd", done.Payload![0]);
        Assert.Equal(1L, done.Payload[1]);
        Assert.Equal("h3", done.Payload[2]);
        EventWrittenEventArgs closed = Assert.Single(listener.Events, e => e.EventName == "ConnectionClosed");
        Assert.Equal(0x10aL, closed.Payload![1]);
        Assert.Equal("peer said no", closed.Payload[4]);
    }

    [Fact]
    public void DatagramEventsOnlyWhenTheKeywordIsEnabled()
    {
        byte[] datagram = { 0xc0, 0, 0, 0, 1 };
        Assert.False(QuicEventSource.Log.DatagramsEnabled);
        // (EventKeywords.None would mean "all keywords" to EventSource; ask for another keyword only.)
        using (var info = new RecordingEventListener(EventLevel.Verbose, QuicEventSource.Keywords.Secrets, counters: false))
        {
            Assert.False(QuicEventSource.Log.DatagramsEnabled);
            QuicEventSource.Log.OnDatagram(true, "c1", datagram, 5, "a", "b");
            Assert.DoesNotContain(info.Events, e => e.EventName == "DatagramSent");
        }
        using var verbose = new RecordingEventListener(EventLevel.Verbose, QuicEventSource.Keywords.Datagrams, counters: false);
        Assert.True(QuicEventSource.Log.DatagramsEnabled);
        QuicEventSource.Log.OnDatagram(false, "c1", datagram, 5, "127.0.0.1:1", "127.0.0.1:2");
        EventWrittenEventArgs e = Assert.Single(verbose.Events, x => x.EventName == "DatagramReceived");
        Assert.Equal(datagram, (byte[])e.Payload![4]!);
        Assert.Equal(5L, e.Payload[3]);
    }

    [Fact]
    public async Task CountersArePublishedAndMove()
    {
        using var listener = new RecordingEventListener(EventLevel.Verbose, EventKeywords.All, counters: true);
        long before = QuicTelemetryCounters.DatagramsSent;
        QuicTelemetryCounters.DatagramSent(1200);
        QuicTelemetryCounters.DatagramSent(1200);
        QuicTelemetryCounters.ConnectionStarted();
        try
        {
            // Other test classes run connections in parallel and move these process-wide counters too: wait until one
            // published batch shows both our datagrams and our connection, whatever else happened around them.
            bool Seen() => listener.Events.Any(e => RecordingEventListener.CounterName(e) == "datagrams-sent" && RecordingEventListener.CounterValue(e) >= before + 2)
                && listener.Events.Any(e => RecordingEventListener.CounterName(e) == "active-connections" && RecordingEventListener.CounterValue(e) >= 1);
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (DateTime.UtcNow < deadline && !Seen())
            {
                await Task.Delay(50);
            }
            Assert.Contains(listener.Events, e => RecordingEventListener.CounterName(e) == "datagrams-sent" && RecordingEventListener.CounterValue(e) >= before + 2);
            Assert.Contains(listener.Events, e => RecordingEventListener.CounterName(e) == "active-connections" && RecordingEventListener.CounterValue(e) >= 1);
            string[] names = listener.Events.Select(RecordingEventListener.CounterName).Where(n => n is not null).Distinct().ToArray()!;
            // Every counter the library publishes (dotnet-counters shows these names).
            string[] expected =
            {
                "active-connections", "handshakes-per-second", "handshakes-completed", "handshake-failures",
                "datagrams-sent-per-second", "datagrams-received-per-second", "bytes-sent-per-second", "bytes-received-per-second",
                "datagrams-sent", "datagrams-received", "packets-lost", "bytes-retransmitted", "smoothed-rtt", "congestion-window",
            };
            Assert.Equal(expected.Order(StringComparer.Ordinal), names.Order(StringComparer.Ordinal));
        }
        finally
        {
            QuicTelemetryCounters.ConnectionEnded();
        }
    }

    [Fact]
    public void MeterPublishesTheSameStatistics()
    {
        QuicMetrics.EnsureInitialized();
        var seen = new ConcurrentDictionary<string, double>();
        using var meterListener = new MeterListener();
        meterListener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == QuicMetrics.MeterName) l.EnableMeasurementEvents(instrument);
        };
        meterListener.SetMeasurementEventCallback<long>((i, v, _, _) => seen[i.Name] = v);
        meterListener.SetMeasurementEventCallback<double>((i, v, _, _) => seen[i.Name] = v);
        meterListener.Start();
        QuicTelemetryCounters.DatagramReceived(100);
        QuicTelemetryCounters.UpdatePathSample(0, 0, 20_000, 14_720);
        try
        {
            meterListener.RecordObservableInstruments();
            Assert.True(seen["quic.datagrams.received"] >= 1);
            Assert.True(seen["quic.bytes.received"] >= 100);
            Assert.True(seen["quic.rtt.smoothed"] > 0);
            Assert.Contains("quic.connection.active", seen.Keys);
            Assert.Contains("quic.congestion_window", seen.Keys);
        }
        finally
        {
            QuicTelemetryCounters.RemovePathSample(20_000, 14_720);
        }
    }

    [Fact]
    public void PathSampleSumsStayExact()
    {
        double baseline = QuicTelemetryCounters.MeanSmoothedRttMs;
        QuicTelemetryCounters.UpdatePathSample(0, 0, 10_000, 1000);
        QuicTelemetryCounters.UpdatePathSample(10_000, 1000, 30_000, 3000);
        QuicTelemetryCounters.RemovePathSample(30_000, 3000);
        Assert.Equal(baseline, QuicTelemetryCounters.MeanSmoothedRttMs);
    }
}
