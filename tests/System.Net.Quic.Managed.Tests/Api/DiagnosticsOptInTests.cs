using System.Net.Quic.Managed.Tests.Diagnostics;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>Key logging and qlog through the public API (process-wide switches: run apart from other telemetry tests).</summary>
[Collection(nameof(TelemetryCollection))]
public class DiagnosticsOptInTests
{
    [Fact]
    public async Task KeyLogAndQlogAreWrittenWhenOptedIn()
    {
        string dir = Path.Combine(Path.GetTempPath(), "quic-diag-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        string keyLog = Path.Combine(dir, "keys.log");
        string qlogDir = Path.Combine(dir, "qlog");
        string? previousQlog = QuicManagedDiagnostics.QlogDirectory;
        try
        {
            QuicManagedDiagnostics.KeyLogFilePath = keyLog;
            QuicManagedDiagnostics.QlogDirectory = qlogDir;
            ManagedDriverHost clientHost, listenerHost;
            await using (QuicListener listener = await QuicApiTestEnvironment.ListenAsync(QuicProvider.Managed, IPAddress.Loopback))
            {
                listenerHost = ((ManagedListener)listener.Impl).Host;
                (QuicConnection client, QuicConnection server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, listener);
                clientHost = ((ManagedConnection)client.Impl).Host;
                await client.CloseAsync(0);
                await client.DisposeAsync();
                await server.DisposeAsync();
            }
            // A qlog is complete when its connection's state is gone: after the closing period, which disposal does not wait
            // for. That period is three PTOs (RFC 9000 §10.2), and a starved machine's round-trip samples make a PTO long
            // (over 1 s seen): the wait is bounded by the 30 s idle timeout, which no closing period reaches here.
            Assert.True(await QuicConformanceTests.EventuallyAsync(() => clientHost.IsDisposed && listenerHost.IsDisposed, TimeSpan.FromSeconds(30)),
                "a connection's state outlived its closing period");

            string[] lines = File.ReadAllLines(keyLog);
            string[] labels = lines.Select(l => l.Split(' ')[0]).Distinct().Order().ToArray();
            Assert.Equal(new[] { "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0" }, labels);
            Assert.All(lines, l => Assert.Equal(64, l.Split(' ')[1].Length)); // the 32-byte client random

            string[] files = Directory.GetFiles(qlogDir, "*.sqlog");
            Assert.Contains(files, f => f.EndsWith("_client.sqlog", StringComparison.Ordinal));
            Assert.Contains(files, f => f.EndsWith("_server.sqlog", StringComparison.Ordinal));
            foreach (string file in files)
            {
                using var read = new FileStream(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
                var copy = new MemoryStream();
                read.CopyTo(copy);
                QlogTracerTests.AssertValidQlog(QlogTracerTests.ParseJsonSeq(copy.ToArray()), file.EndsWith("_server.sqlog", StringComparison.Ordinal) ? "server" : "client");
            }
        }
        finally
        {
            QuicManagedDiagnostics.KeyLogFilePath = null;
            QuicManagedDiagnostics.QlogDirectory = previousQlog;
            try { Directory.Delete(dir, recursive: true); } catch (IOException) { }
        }
    }

    /// <summary>
    /// The server's qlog of a connection starts with the client's first Initial, also when the server refuses the
    /// connection (its options callback fails): the trace of a refused handshake shows what the client sent and the close.
    /// </summary>
    [Fact]
    public async Task ServerQlogStartsWithTheFirstInitialEvenForARefusedHandshake()
    {
        string dir = Path.Combine(Path.GetTempPath(), "quic-qlog-" + Guid.NewGuid().ToString("N"));
        string? previousQlog = QuicManagedDiagnostics.QlogDirectory;
        try
        {
            QuicManagedDiagnostics.QlogDirectory = dir;
            QuicListenerOptions options = QuicApiTestEnvironment.ListenerOptions(IPAddress.Loopback);
            options.ConnectionOptionsCallback = (_, _, _) => throw new InvalidOperationException("refused by the test");
            ManagedDriverHost listenerHost;
            await using (QuicListener listener = await QuicListener.ListenAsync(options, QuicProvider.Managed, CancellationToken.None))
            {
                listenerHost = ((ManagedListener)listener.Impl).Host;
                QuicClientConnectionOptions client = QuicApiTestEnvironment.ClientOptions(listener.LocalEndPoint);
                await Assert.ThrowsAnyAsync<Exception>(() => QuicApiTestEnvironment.ConnectAsync(QuicProvider.Managed, client));
            }
            // After the refused connection's closing period (three PTOs: long on a starved machine; see above).
            Assert.True(await QuicConformanceTests.EventuallyAsync(() => listenerHost.IsDisposed, TimeSpan.FromSeconds(30)));

            string server = Assert.Single(Directory.GetFiles(dir, "*_server.sqlog"));
            using var read = new FileStream(server, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            var copy = new MemoryStream();
            read.CopyTo(copy);
            List<System.Text.Json.JsonDocument> records = QlogTracerTests.ParseJsonSeq(copy.ToArray());
            QlogTracerTests.AssertValidQlog(records, "server");
            // The client's first Initial (packet 0, the ClientHello) is in the trace, and so are the refusal and the
            // server's Initial that carries it.
            Assert.Contains(records, r => IsPacket(r.RootElement, "transport:packet_received", "initial", 0));
            Assert.Contains(records, r => IsPacket(r.RootElement, "transport:packet_sent", "initial", 0));
            Assert.Contains(records, r => r.RootElement.TryGetProperty("name", out System.Text.Json.JsonElement n) && n.GetString() == "connectivity:connection_closed");
        }
        finally
        {
            QuicManagedDiagnostics.QlogDirectory = previousQlog;
            try { Directory.Delete(dir, recursive: true); } catch (IOException) { }
        }
    }

    private static bool IsPacket(System.Text.Json.JsonElement e, string name, string type, long number)
        => e.TryGetProperty("name", out System.Text.Json.JsonElement n) && n.GetString() == name
            && e.TryGetProperty("data", out System.Text.Json.JsonElement data) && data.TryGetProperty("header", out System.Text.Json.JsonElement header)
            && header.GetProperty("packet_type").GetString() == type && header.GetProperty("packet_number").GetInt64() == number;
}
