using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;
using Microsoft.Diagnostics.NETCore.Client;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>
/// The dumper's counters view (our stand-in for dotnet-counters, which the package registry here lacks) against this
/// very process: live by PID, and from a .nettrace recorded with dotnet-trace's provider syntax.
/// </summary>
[Collection(nameof(System.Net.Quic.Managed.Tests.Diagnostics.TelemetryCollection))]
public sealed class DumperCounterMonitorTests
{
    /// <summary>Fake traffic on the process-wide statistics until <paramref name="stop"/> is set.</summary>
    private static Task TrafficUntil(CancellationToken stop) => Task.Run(async () =>
    {
        while (!stop.IsCancellationRequested)
        {
            QuicTelemetryCounters.DatagramSent(1200);
            await Task.Delay(10);
        }
    });

    [Fact]
    public async Task CountersModePrintsTheLibraryCountersMoving()
    {
        Assert.Equal(QuicEventSource.SourceName, QuicEventSource.Log.Name); // the source must exist to be enabled (connections create it)
        QuicTelemetryCounters.ConnectionStarted();
        using var stop = new CancellationTokenSource();
        Task traffic = TrafficUntil(stop.Token);
        try
        {
            string output = await Task.Run(() => DumperGoldenTests.Run("--pid", Environment.ProcessId.ToString(), "--counters", "--seconds", "3"));
            Assert.Contains("active-connections", output);
            Assert.Contains("datagrams-sent-per-second", output);
            Assert.Contains("handshakes-per-second", output);
            // Datagrams flow during the run: some interval reports a positive rate.
            Assert.Matches(@"datagrams-sent-per-second\s+[1-9]", output);
            // The Meter's instruments come through the runtime's System.Diagnostics.Metrics provider, as for dotnet-counters.
            Assert.Matches(@"quic\.datagrams\.sent\s+[1-9][0-9,.]*\s+\{datagram\}\s+\(Meter counter", output);
            Assert.Matches(@"quic\.connection\.active\s+[1-9][0-9,.]*\s+\{connection\}\s+\(Meter up-down counter\)", output);
            Assert.Matches(@"quic\.rtt\.smoothed\s+\S+\s+s\s+\(Meter gauge\)", output);
        }
        finally
        {
            stop.Cancel();
            await traffic;
            QuicTelemetryCounters.ConnectionEnded();
        }
    }

    [Fact]
    public async Task CountersFromARecordedNetTrace()
    {
        string path = Path.Combine(Path.GetTempPath(), $"dumper-counters-{Guid.NewGuid():N}.nettrace");
        using var stop = new CancellationTokenSource();
        Task traffic = TrafficUntil(stop.Token);
        try
        {
            // What `dotnet-trace collect --providers 'System.Net.Quic.Managed:0:4:EventCounterIntervalSec=1'` asks for.
            var provider = new EventPipeProvider(QuicEventSource.SourceName, EventLevel.Informational, 0,
                new Dictionary<string, string> { ["EventCounterIntervalSec"] = "0.5" });
            using (EventPipeSession session = new DiagnosticsClient(Environment.ProcessId).StartEventPipeSession(new[] { provider }, requestRundown: false))
            {
                await using var file = File.Create(path);
                Task copy = session.EventStream.CopyToAsync(file);
                await Task.Delay(2000);
                session.Stop();
                await copy.WaitAsync(TimeSpan.FromSeconds(20));
            }

            string output = DumperGoldenTests.Run("--nettrace", path, "--counters");
            Assert.Matches(@"datagrams-sent-per-second\s+[1-9]", output);
            Assert.Contains("(Bytes Sent Rate)", output);
            Assert.Contains("smoothed-rtt", output);
        }
        finally
        {
            stop.Cancel();
            await traffic;
            File.Delete(path);
        }
    }

    [Fact]
    public void CountersNeedALiveProcessOrATrace()
    {
        var error = new StringWriter();
        Assert.Equal(DumperCommand.UsageError, DumperCommand.Run(new[] { "--sample", "rfc9001-client-initial", "--counters" }, new StringWriter(), error));
        Assert.Contains("--counters applies to --pid and --nettrace only", error.ToString());
    }
}
