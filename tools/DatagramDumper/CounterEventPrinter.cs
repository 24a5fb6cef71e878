using System.Globalization;
using Microsoft.Diagnostics.Tracing;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>
/// Turns the library's counter events into one line each, the way <c>dotnet-counters monitor</c> shows them: the
/// EventCounters of the System.Net.Quic.Managed EventSource, and the instruments of the System.Net.Quic.Managed Meter
/// as the runtime's System.Diagnostics.Metrics EventSource publishes them (the provider dotnet-counters enables for
/// Meters). Works on a live session and on a .nettrace written by dotnet-trace alike.
/// </summary>
internal sealed class CounterEventPrinter
{
    /// <summary>The runtime EventSource that publishes Meter instruments to out-of-process tools.</summary>
    public const string MetricsProviderName = "System.Diagnostics.Metrics";

    private readonly TextWriter _output;
    private readonly string? _sessionId;

    /// <param name="output">Where lines go (written under a lock: events may arrive on several threads).</param>
    /// <param name="sessionId">Meter events of this Metrics session only (null: any, as in a recorded trace).</param>
    public CounterEventPrinter(TextWriter output, string? sessionId)
    {
        _output = output;
        _sessionId = sessionId;
    }

    /// <summary>Lines printed so far.</summary>
    public int Lines { get; private set; }

    public void OnEvent(TraceEvent e)
    {
        if (e.ProviderName == EventPipeDatagramSource.ProviderName && e.EventName == "EventCounters") PrintEventCounter(e);
        else if (e.ProviderName == MetricsProviderName) PrintInstrument(e);
    }

    private void PrintEventCounter(TraceEvent e)
    {
        if (e.PayloadValue(0) is not IDictionary<string, object> payload) return;
        if (payload.TryGetValue("Payload", out object? inner) && inner is IDictionary<string, object> fields) payload = fields;
        string name = payload.TryGetValue("Name", out object? n) ? n?.ToString() ?? "?" : "?";
        string display = payload.TryGetValue("DisplayName", out object? d) ? d?.ToString() ?? name : name;
        string units = payload.TryGetValue("DisplayUnits", out object? u) ? u?.ToString() ?? "" : "";
        object? value = payload.TryGetValue("Increment", out object? inc) ? inc : payload.TryGetValue("Mean", out object? mean) ? mean : null;
        Write(e.TimeStamp, name, Convert.ToDouble(value, CultureInfo.InvariantCulture), units, display);
    }

    /// <summary>
    /// MetricsEventSource payloads (all strings): sessionId, meterName, meterVersion, instrumentName, unit, tags, then
    /// rate and value for counters (rate = change during the refresh interval), lastValue for gauges.
    /// </summary>
    private void PrintInstrument(TraceEvent e)
    {
        string kind = e.EventName switch
        {
            "CounterRateValuePublished" => "Meter counter, change per interval",
            "UpDownCounterRateValuePublished" => "Meter up-down counter",
            "GaugeValuePublished" => "Meter gauge",
            _ => "",
        };
        if (kind.Length == 0 || e.PayloadNames.Length < 7) return;
        if (_sessionId is not null && e.PayloadByName("sessionId") as string != _sessionId) return;
        if (e.PayloadByName("meterName") as string != EventPipeDatagramSource.ProviderName) return;
        string name = e.PayloadByName("instrumentName") as string ?? "?";
        string unit = e.PayloadByName("unit") as string ?? "";
        // An up-down counter shows its current value; a counter its change (dotnet-counters' "rate"); a gauge its last value.
        string field = e.EventName switch
        {
            "GaugeValuePublished" => "lastValue",
            "UpDownCounterRateValuePublished" => "value",
            _ => "rate",
        };
        if (!double.TryParse(e.PayloadByName(field) as string, NumberStyles.Float, CultureInfo.InvariantCulture, out double value)) return;
        Write(e.TimeStamp, name, value, unit, kind);
    }

    private void Write(DateTime time, string name, double value, string unit, string description)
    {
        lock (_output)
        {
            // Small values (an RTT in seconds) need more digits than rates of thousands.
            string text = Math.Abs(value) < 10 && value != Math.Floor(value)
                ? value.ToString("0.######", CultureInfo.InvariantCulture)
                : value.ToString("N1", CultureInfo.InvariantCulture);
            _output.WriteLine($"{time:HH:mm:ss} {name,-32} {text,14} {unit,-12} ({description})");
            Lines++;
        }
    }
}
