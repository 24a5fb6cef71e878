using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>
/// Prints the library's EventCounters (System.Net.Quic.Managed) from a running process through EventPipe, the way
/// <c>dotnet-counters monitor --counters System.Net.Quic.Managed</c> does (that tool is not in the package registry
/// reachable here; dotnet-trace is, and reads the same counters into a .nettrace).
/// </summary>
internal static class CounterMonitor
{
    public static int Run(int pid, TimeSpan duration, TimeSpan interval, TextWriter output, TextWriter error)
    {
        var provider = new EventPipeProvider(EventPipeDatagramSource.ProviderName, EventLevel.Informational, 0,
            new Dictionary<string, string> { ["EventCounterIntervalSec"] = interval.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture) });
        EventPipeSession session;
        try
        {
            session = new DiagnosticsClient(pid).StartEventPipeSession(new[] { provider }, requestRundown: false);
        }
        catch (Exception e) when (e is ServerNotAvailableException or UnauthorizedAccessException or IOException or TimeoutException)
        {
            error.WriteLine($"error: cannot attach to PID {pid}: {e.Message}");
            return DumperCommand.InputError;
        }

        using (session)
        using (var timer = new Timer(_ => Stop(session), null, duration, Timeout.InfiniteTimeSpan))
        using (var source = new EventPipeEventSource(session.EventStream))
        {
            source.Dynamic.All += e =>
            {
                if (e.EventName != "EventCounters" || e.PayloadValue(0) is not IDictionary<string, object> payload) return;
                if (payload.TryGetValue("Payload", out object? inner) && inner is IDictionary<string, object> fields) payload = fields;
                string name = payload.TryGetValue("Name", out object? n) ? n?.ToString() ?? "?" : "?";
                string display = payload.TryGetValue("DisplayName", out object? d) ? d?.ToString() ?? name : name;
                string units = payload.TryGetValue("DisplayUnits", out object? u) ? u?.ToString() ?? "" : "";
                object? value = payload.TryGetValue("Increment", out object? inc) ? inc : payload.TryGetValue("Mean", out object? mean) ? mean : null;
                lock (output)
                {
                    output.WriteLine($"{e.TimeStamp:HH:mm:ss} {name,-32} {Convert.ToDouble(value, System.Globalization.CultureInfo.InvariantCulture),14:N1} {units,-3} ({display})");
                }
            };
            try
            {
                source.Process();
            }
            catch (Exception e) when (e is IOException or EndOfStreamException or InvalidOperationException)
            {
                error.WriteLine($"trace ended: {e.Message}");
            }
        }
        output.Flush();
        return DumperCommand.Success;
    }

    private static void Stop(EventPipeSession session)
    {
        try
        {
            session.Stop();
        }
        catch (Exception e) when (e is ServerNotAvailableException or TimeoutException or IOException or ObjectDisposedException)
        {
        }
    }
}
