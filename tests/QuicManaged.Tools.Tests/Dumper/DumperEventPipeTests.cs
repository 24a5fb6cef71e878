using System.Net.Quic.Managed.Diagnostics;
using Microsoft.Diagnostics.NETCore.Client;
using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>
/// The dumper's EventPipe inputs, against this very process: datagram events emitted through QuicEventSource are
/// recorded to a .nettrace file and read back, and read live by PID.
/// </summary>
[Collection(nameof(System.Net.Quic.Managed.Tests.Diagnostics.TelemetryCollection))]
public sealed class DumperEventPipeTests
{
    private static byte[] ClientInitial()
    {
        SampleDatagrams.TryGet("rfc9001-client-initial", out string hex, out _);
        HexText.TryParse(hex, out byte[] datagram);
        return datagram;
    }

    /// <summary>Emits the RFC client Initial as a "sent" datagram event until <paramref name="stop"/> is set.</summary>
    private static async Task EmitUntil(CancellationToken stop)
    {
        byte[] datagram = ClientInitial();
        while (!stop.IsCancellationRequested)
        {
            QuicEventSource.Log.OnDatagram(true, "test-conn", datagram, 42, "127.0.0.1:5000", "127.0.0.1:4433");
            await Task.Delay(50);
        }
    }

    [Fact]
    public async Task RecordedNetTraceDecodesTheDatagrams()
    {
        string path = Path.Combine(Path.GetTempPath(), $"dumper-{Guid.NewGuid():N}.nettrace");
        try
        {
            var client = new DiagnosticsClient(Environment.ProcessId);
            using (EventPipeSession session = client.StartEventPipeSession(new[] { EventPipeDatagramSource.Provider }, requestRundown: false))
            {
                using var emitting = new CancellationTokenSource();
                Task emitter = EmitUntil(emitting.Token);
                await using var file = File.Create(path);
                Task copy = session.EventStream.CopyToAsync(file);
                await Task.Delay(1500);
                emitting.Cancel();
                await emitter;
                await Task.Delay(300);
                session.Stop();
                await copy.WaitAsync(TimeSpan.FromSeconds(20));
            }

            string output = DumperGoldenTests.Run("--nettrace", path);
            Assert.Contains("Initial version=v1 DCID=8394c8f03e515708", output);
            Assert.Contains("TLS ClientHello", output);
            Assert.Contains("sent by test-conn", output);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task LiveAttachByPidPrintsTheDatagrams()
    {
        using var emitting = new CancellationTokenSource();
        Task emitter = EmitUntil(emitting.Token);
        try
        {
            string output = await Task.Run(() => DumperGoldenTests.Run("--pid", Environment.ProcessId.ToString(), "--seconds", "2"));
            Assert.Contains("Initial version=v1", output);
            Assert.Contains("PADDING length=917", output);
        }
        finally
        {
            emitting.Cancel();
            await emitter;
        }
    }

    [Fact]
    public void UnknownPidIsAnInputError()
    {
        var error = new StringWriter();
        Assert.Equal(DumperCommand.InputError, DumperCommand.Run(new[] { "--pid", "999999" }, new StringWriter(), error));
        Assert.Contains("999999", error.ToString());
    }
}
