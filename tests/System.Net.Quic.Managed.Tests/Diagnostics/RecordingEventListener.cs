using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Tests.Diagnostics;

/// <summary>
/// An in-process EventListener on System.Net.Quic.Managed that records every event it is sent (from any thread),
/// optionally with EventCounters published every 0.2 s.
/// </summary>
internal sealed class RecordingEventListener : EventListener
{
    public readonly ConcurrentQueue<EventWrittenEventArgs> Events = new();

    public RecordingEventListener(EventLevel level, EventKeywords keywords, bool counters = false)
    {
        // EventSources that existed before this constructor ran are announced through OnEventSourceCreated during
        // base construction, before our fields are set: enable ours explicitly now.
        var arguments = counters ? new Dictionary<string, string?> { ["EventCounterIntervalSec"] = "0.2" } : null;
        EnableEvents(QuicEventSource.Log, level, keywords, arguments);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e) => Events.Enqueue(e);

    /// <summary>The events named <paramref name="name"/> so far.</summary>
    public EventWrittenEventArgs[] Named(string name) => Events.Where(e => e.EventName == name).ToArray();

    /// <summary>Polls (up to <paramref name="timeout"/>) until <paramref name="condition"/> holds; returns whether it did.</summary>
    public async Task<bool> WaitUntilAsync(Func<bool> condition, TimeSpan timeout)
    {
        DateTime deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow >= deadline) return false;
            await Task.Delay(20);
        }
        return true;
    }

    /// <summary>The counter name of an EventCounters event, or null for any other event.</summary>
    public static string? CounterName(EventWrittenEventArgs e)
        => e.EventName == "EventCounters" && e.Payload?[0] is IDictionary<string, object?> p ? p["Name"] as string : null;

    /// <summary>A counter's value: Mean for polling counters, Increment (per interval) for incrementing ones.</summary>
    public static double CounterValue(EventWrittenEventArgs e)
    {
        var p = (IDictionary<string, object?>)e.Payload![0]!;
        return Convert.ToDouble(p.TryGetValue("Mean", out object? mean) ? mean : p["Increment"], System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>The largest value published so far for counter <paramref name="name"/> (NaN when none was).</summary>
    public double MaxCounter(string name)
    {
        double max = double.NaN;
        foreach (EventWrittenEventArgs e in Events)
        {
            if (CounterName(e) != name) continue;
            double v = CounterValue(e);
            if (double.IsNaN(max) || v > max) max = v;
        }
        return max;
    }
}
