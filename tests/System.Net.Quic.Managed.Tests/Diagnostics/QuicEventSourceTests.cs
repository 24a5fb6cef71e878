using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

[Collection(nameof(TelemetryCollection))]
public class QuicEventSourceTests
{
    private sealed class Listener : EventListener
    {
        public readonly ConcurrentQueue<EventWrittenEventArgs> Events = new();
        private readonly EventLevel _level;
        private readonly EventKeywords _keywords;
        private readonly bool _counters;

        public Listener(EventLevel level, EventKeywords keywords, bool counters)
        {
            _level = level;
            _keywords = keywords;
            _counters = counters;
            // EventSources created before this constructor ran are announced through OnEventSourceCreated
            // during base construction, before our fields were set; enable explicitly now.
            EnableEventsNow(QuicEventSource.Log);
        }

        private void EnableEventsNow(EventSource source)
        {
            var args = _counters ? new Dictionary<string, string?> { ["EventCounterIntervalSec"] = "0.2" } : null;
            EnableEvents(source, _level, _keywords, args);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e) => Events.Enqueue(e);
    }

    [Fact]
    public void SourceHasTheLibraryName()
    {
        Assert.Equal("System.Net.Quic.Managed", QuicEventSource.Log.Name);
        Assert.Equal(QuicEventSource.SourceName, QuicMetrics.MeterName);
    }

    [Fact]
    public void InformationalEventsCarryTheirPayload()
    {
        using var listener = new Listener(EventLevel.Informational, EventKeywords.None, counters: false);
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
        using (var info = new Listener(EventLevel.Verbose, QuicEventSource.Keywords.Secrets, counters: false))
        {
            Assert.False(QuicEventSource.Log.DatagramsEnabled);
            QuicEventSource.Log.OnDatagram(true, "c1", datagram, 5, "a", "b");
            Assert.DoesNotContain(info.Events, e => e.EventName == "DatagramSent");
        }
        using var verbose = new Listener(EventLevel.Verbose, QuicEventSource.Keywords.Datagrams, counters: false);
        Assert.True(QuicEventSource.Log.DatagramsEnabled);
        QuicEventSource.Log.OnDatagram(false, "c1", datagram, 5, "127.0.0.1:1", "127.0.0.1:2");
        EventWrittenEventArgs e = Assert.Single(verbose.Events, x => x.EventName == "DatagramReceived");
        Assert.Equal(datagram, (byte[])e.Payload![4]!);
        Assert.Equal(5L, e.Payload[3]);
    }

    [Fact]
    public async Task CountersArePublishedAndMove()
    {
        using var listener = new Listener(EventLevel.Verbose, EventKeywords.All, counters: true);
        long before = QuicTelemetryCounters.DatagramsSent;
        QuicTelemetryCounters.DatagramSent(1200);
        QuicTelemetryCounters.DatagramSent(1200);
        QuicTelemetryCounters.ConnectionStarted();
        try
        {
            // Other test classes run connections in parallel and move these process-wide counters too: wait until one
            // published batch shows both our datagrams and our connection, whatever else happened around them.
            bool Seen() => listener.Events.Any(e => CounterName(e) == "datagrams-sent" && CounterValue(e) >= before + 2)
                && listener.Events.Any(e => CounterName(e) == "active-connections" && CounterValue(e) >= 1);
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (DateTime.UtcNow < deadline && !Seen())
            {
                await Task.Delay(50);
            }
            Assert.Contains(listener.Events, e => CounterName(e) == "datagrams-sent" && CounterValue(e) >= before + 2);
            Assert.Contains(listener.Events, e => CounterName(e) == "active-connections" && CounterValue(e) >= 1);
            string[] names = listener.Events.Select(CounterName).Where(n => n is not null).Distinct().ToArray()!;
            foreach (string expected in new[] { "handshakes-per-second", "bytes-sent-per-second", "packets-lost", "smoothed-rtt", "congestion-window", "handshake-failures" })
            {
                Assert.Contains(expected, names);
            }
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

    private static string? CounterName(EventWrittenEventArgs e)
        => e.EventName == "EventCounters" && e.Payload?[0] is IDictionary<string, object?> p ? p["Name"] as string : null;

    private static double CounterValue(EventWrittenEventArgs e)
    {
        var p = (IDictionary<string, object?>)e.Payload![0]!;
        return Convert.ToDouble(p.TryGetValue("Mean", out object? mean) ? mean : p["Increment"]);
    }
}

/// <summary>Telemetry tests share process-wide statics and listeners: run them one at a time.</summary>
[CollectionDefinition(nameof(TelemetryCollection), DisableParallelization = true)]
public class TelemetryCollection
{
}
