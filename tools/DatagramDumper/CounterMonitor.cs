using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>
/// Prints the library's counters from a running process through EventPipe, the way <c>dotnet-counters monitor
/// --counters System.Net.Quic.Managed</c> does (that tool is not in the package registry reachable here; dotnet-trace
/// is): the EventCounters of the System.Net.Quic.Managed EventSource and the instruments of the Meter of the same name.
/// Also prints them from a .nettrace recorded by dotnet-trace, which has no counters view of its own.
/// </summary>
internal static class CounterMonitor
{
    public static int Run(int pid, TimeSpan duration, TimeSpan interval, TextWriter output, TextWriter error)
    {
        string seconds = interval.TotalSeconds.ToString(CultureInfo.InvariantCulture);
        string sessionId = Guid.NewGuid().ToString("N");
        var providers = new[]
        {
            new EventPipeProvider(EventPipeDatagramSource.ProviderName, EventLevel.Informational, 0,
                new Dictionary<string, string> { ["EventCounterIntervalSec"] = seconds }),
            // What dotnet-counters asks of MetricsEventSource for a Meter: time series values (keyword 0x2) every interval.
            new EventPipeProvider(CounterEventPrinter.MetricsProviderName, EventLevel.Informational, 0x2,
                new Dictionary<string, string>
                {
                    ["SessionId"] = sessionId,
                    ["Metrics"] = EventPipeDatagramSource.ProviderName,
                    ["RefreshInterval"] = seconds,
                    ["MaxTimeSeries"] = "1000",
                    ["MaxHistograms"] = "10",
                }),
        };
        EventPipeSession session;
        try
        {
            session = new DiagnosticsClient(pid).StartEventPipeSession(providers, requestRundown: false);
        }
        catch (Exception e) when (e is ServerNotAvailableException or UnauthorizedAccessException or IOException or TimeoutException)
        {
            error.WriteLine($"error: cannot attach to PID {pid}: {e.Message}");
            return DumperCommand.InputError;
        }

        var printer = new CounterEventPrinter(output, sessionId);
        using (session)
        using (var timer = new Timer(_ => Stop(session), null, duration, Timeout.InfiniteTimeSpan))
        using (var source = new EventPipeEventSource(session.EventStream))
        {
            source.Dynamic.All += printer.OnEvent;
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

    /// <summary>The counters recorded in a .nettrace (dotnet-trace collect with EventCounterIntervalSec, or the Metrics provider).</summary>
    public static int RunFile(string path, TextWriter output, TextWriter error)
    {
        var printer = new CounterEventPrinter(output, sessionId: null);
        try
        {
            using var source = new EventPipeEventSource(path);
            source.Dynamic.All += printer.OnEvent;
            source.Process();
        }
        catch (Exception e) when (e is IOException or EndOfStreamException or InvalidOperationException or FormatException or System.Runtime.Serialization.SerializationException)
        {
            error.WriteLine($"error: cannot read {path}: {e.Message}");
            return DumperCommand.InputError;
        }
        if (printer.Lines == 0) error.WriteLine("no System.Net.Quic.Managed counters in the trace (collect with EventCounterIntervalSec=1)");
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
