using System.Diagnostics;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using QuicManaged.Http.Framing;
using ManagedQuic = System.Net.Quic.Managed;

namespace QuicManaged.Http.Tests;

/// <summary>
/// A client that gives up (cancels while the handler waits, cancels mid-response, vanishes) and a server that shuts down
/// with requests in flight, against Kestrel over each transport with the same app: <c>HttpContext.RequestAborted</c>
/// fires at the client's abort, and nothing above Debug is logged for any of it. Rows: server transport, client.
/// </summary>
public sealed class KestrelCancellationTests
{
    // Generous: these only have to separate "at the abort" from "never" (before the fix the token fired at shutdown).
    private static readonly TimeSpan AbortWait = TimeSpan.FromSeconds(15);

    public static TheoryData<string, string> Rows => new()
    {
        { "managed", "managed" },
        { "managed", "msquic" },
        { "msquic", "managed" },
        { "msquic", "msquic" },
    };

    /// <summary>What one endpoint saw: it started, and when (if) RequestAborted fired.</summary>
    private sealed class Probe
    {
        public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<TimeSpan> Aborted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Finished { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Stopwatch Clock { get; } = new();

        public void Watch(HttpContext context) => context.RequestAborted.Register(() => Aborted.TrySetResult(Clock.Elapsed));
    }

    private static void MapProbes(WebApplication app, Probe probe)
    {
        // Waits for the client's cancel (a long poll).
        app.MapGet("/wait", async (HttpContext context) =>
        {
            probe.Watch(context);
            probe.Started.TrySetResult();
            try
            {
                await Task.Delay(Timeout.Infinite, context.RequestAborted);
            }
            catch (OperationCanceledException)
            {
            }
            finally
            {
                probe.Finished.TrySetResult();
            }
        });

        // Streams until the client stops reading (server-sent events, a gRPC server stream).
        app.MapGet("/stream", async (HttpContext context) =>
        {
            probe.Watch(context);
            byte[] chunk = new byte[1024];
            try
            {
                while (!context.RequestAborted.IsCancellationRequested)
                {
                    await context.Response.Body.WriteAsync(chunk, context.RequestAborted);
                    await context.Response.Body.FlushAsync(context.RequestAborted);
                    probe.Started.TrySetResult();
                    await Task.Delay(5, context.RequestAborted);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or IOException)
            {
            }
            finally
            {
                probe.Finished.TrySetResult();
            }
        });
        app.MapGet("/hello", () => "hello");
    }

    /// <summary>GET /wait, cancelled by the client once the handler waits: the client sees its cancellation and the handler's RequestAborted fires.</summary>
    private static async Task CancelWhileWaitingAsync(HttpClient http, TransportServer server, Probe probe, CancellationToken timeout)
    {
        using var cancel = new CancellationTokenSource();
        Task<HttpResponseMessage> request = http.GetAsync(new Uri(server.BaseUri, "/wait"), cancel.Token);
        await probe.Started.Task.WaitAsync(timeout);
        probe.Clock.Start();
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => request);
        TimeSpan fired = await probe.Aborted.Task.WaitAsync(AbortWait, timeout);
        Assert.True(fired < AbortWait, $"RequestAborted fired {fired} after the cancel");
        await probe.Finished.Task.WaitAsync(timeout);
    }

    private static void AssertQuiet(TransportServer server)
    {
        IReadOnlyList<string> noisy = server.NoisyEntries();
        Assert.True(noisy.Count == 0, "logged above Debug:\n" + string.Join("\n", noisy));
    }

    [SkippableTheory]
    [MemberData(nameof(Rows))]
    public async Task CancelWhileTheHandlerWaits_RequestAbortedFires_NothingLogged(string transport, string client)
    {
        Skip.If(TransportServer.Unavailable(transport, client) is not null, TransportServer.Unavailable(transport, client));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var probe = new Probe();
        await using TransportServer server = await TransportServer.StartAsync(transport, app => MapProbes(app, probe));
        using HttpClient http = TransportServer.Client(client);
        Assert.Equal("hello", await http.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));

        await CancelWhileWaitingAsync(http, server, probe, timeout.Token);

        // The connection still serves, then the server stops: anything the abort logged is in by then.
        Assert.Equal("hello", await http.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
        await server.StopAsync();
        AssertQuiet(server);
    }

    [SkippableTheory]
    [MemberData(nameof(Rows))]
    public async Task CancelMidResponse_RequestAbortedFires_NothingLogged(string transport, string client)
    {
        Skip.If(TransportServer.Unavailable(transport, client) is not null, TransportServer.Unavailable(transport, client));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var probe = new Probe();
        await using TransportServer server = await TransportServer.StartAsync(transport, app => MapProbes(app, probe));
        using HttpClient http = TransportServer.Client(client);

        using var cancel = new CancellationTokenSource();
        using (HttpResponseMessage response = await http.GetAsync(new Uri(server.BaseUri, "/stream"), HttpCompletionOption.ResponseHeadersRead, timeout.Token))
        {
            Stream body = await response.Content.ReadAsStreamAsync(timeout.Token);
            byte[] buffer = new byte[4096];
            int total = 0;
            while (total < 8 * 1024)
            {
                int n = await body.ReadAsync(buffer, timeout.Token);
                Assert.True(n > 0, "the stream ended early");
                total += n;
            }

            // A read in progress when the client cancels.
            ValueTask<int> pending = body.ReadAsync(new byte[64 * 1024], cancel.Token);
            probe.Clock.Start();
            await cancel.CancelAsync();
            try
            {
                while (await pending > 0)
                {
                    pending = body.ReadAsync(new byte[64 * 1024], cancel.Token);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or IOException or HttpRequestException)
            {
            }
        }

        TimeSpan fired = await probe.Aborted.Task.WaitAsync(AbortWait, timeout.Token);
        Assert.True(fired < AbortWait, $"RequestAborted fired {fired} after the cancel");
        await probe.Finished.Task.WaitAsync(timeout.Token);
        Assert.Equal("hello", await http.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
        await server.StopAsync();
        AssertQuiet(server);
    }

    /// <summary>
    /// The client's QUIC connection closes abruptly (CONNECTION_CLOSE) while its request waits: a raw connection, since
    /// disposing an HttpClient lets its requests in flight finish first.
    /// </summary>
    [SkippableTheory]
    [InlineData("managed")]
    [InlineData("msquic")]
    public async Task ClientVanishes_RequestAbortedFires_NothingLogged(string transport)
    {
        Skip.If(TransportServer.Unavailable(transport) is not null, TransportServer.Unavailable(transport));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var probe = new Probe();
        await using TransportServer server = await TransportServer.StartAsync(transport, app => MapProbes(app, probe));

        ManagedQuic.QuicConnection connection = await KestrelBadInputTests.ConnectRawAsync(server.Port, timeout.Token);
        await using (connection)
        {
            await using ManagedQuic.QuicStream control = await connection.OpenOutboundStreamAsync(ManagedQuic.QuicStreamType.Unidirectional, timeout.Token);
            await control.WriteAsync(new byte[] { 0x00, 0x04, 0x00 }, timeout.Token); // control stream, empty SETTINGS
            ManagedQuic.QuicStream request = await connection.OpenOutboundStreamAsync(ManagedQuic.QuicStreamType.Bidirectional, timeout.Token);
            using var message = new HttpRequestMessage(HttpMethod.Get, new Uri(server.BaseUri, "/wait"));
            await request.WriteAsync(Http3Message.EncodeHeadersFrame(Http3RequestHeaders.Build(message)), completeWrites: true, timeout.Token);
            await probe.Started.Task.WaitAsync(timeout.Token);
            probe.Clock.Start();
            await connection.CloseAsync(0x10c, timeout.Token); // H3_REQUEST_CANCELLED: the client is gone
        }

        TimeSpan fired = await probe.Aborted.Task.WaitAsync(AbortWait, timeout.Token);
        Assert.True(fired < AbortWait, $"RequestAborted fired {fired} after the client vanished");
        await probe.Finished.Task.WaitAsync(timeout.Token);
        await server.StopAsync();
        AssertQuiet(server);
    }

    /// <summary>
    /// Request stream contexts that ended cleanly serve later streams, and with them Kestrel's per-stream HTTP/3 state
    /// (its request object, seen here as the request feature); one whose client cancelled is not reused.
    /// </summary>
    [Fact]
    public async Task CleanRequestStreams_AreReused_WithKestrelsStreamState()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var probe = new Probe();
        await using TransportServer server = await TransportServer.StartAsync("managed", app =>
        {
            MapProbes(app, probe);
            app.MapGet("/identity", (HttpContext context) => System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(
                context.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpRequestFeature>()).ToString(System.Globalization.CultureInfo.InvariantCulture));
        });
        using HttpClient http = TransportServer.Client("managed");
        var seen = new HashSet<string>();
        for (int i = 0; i < 30; i++)
        {
            seen.Add(await http.GetStringAsync(new Uri(server.BaseUri, "/identity"), timeout.Token));
            await Task.Delay(50, timeout.Token); // the server returns a context once the response's FIN is acknowledged
        }

        Assert.True(seen.Count <= 20, $"{seen.Count} request objects for 30 sequential requests: streams were not reused");

        // A cancelled request in between: the next requests are still served correctly.
        await CancelWhileWaitingAsync(http, server, probe, timeout.Token);
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal("hello", await http.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
        }

        await server.StopAsync();
        AssertQuiet(server);
    }

    /// <summary>The server shuts down (GOAWAY) with requests in flight: they complete normally, none is aborted.</summary>
    [SkippableTheory]
    [MemberData(nameof(Rows))]
    public async Task GoawayDuringRequests_InFlightRequestsComplete_NothingLogged(string transport, string client)
    {
        Skip.If(TransportServer.Unavailable(transport, client) is not null, TransportServer.Unavailable(transport, client));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var probe = new Probe();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var probes = Enumerable.Range(0, 3).Select(_ => new Probe()).ToArray();
        int next = -1;
        await using TransportServer server = await TransportServer.StartAsync(transport, app =>
        {
            MapProbes(app, probe);
            app.MapGet("/held", async (HttpContext context) =>
            {
                Probe mine = probes[Interlocked.Increment(ref next)];
                mine.Watch(context);
                mine.Started.TrySetResult();
                await gate.Task;
                await context.Response.WriteAsync("released");
            });
        });
        using HttpClient http = TransportServer.Client(client);
        Task<string>[] requests = probes.Select(_ => http.GetStringAsync(new Uri(server.BaseUri, "/held"), timeout.Token)).ToArray();
        await Task.WhenAll(probes.Select(p => p.Started.Task)).WaitAsync(timeout.Token);

        Task stopping = server.StopAsync(); // Kestrel sends GOAWAY and waits for the requests in flight
        Assert.False(stopping.IsCompleted);
        gate.SetResult();
        foreach (Task<string> request in requests)
        {
            Assert.Equal("released", await request.WaitAsync(timeout.Token));
        }

        await stopping.WaitAsync(timeout.Token);
        Assert.All(probes, p => Assert.False(p.Aborted.Task.IsCompleted, "a request in flight at GOAWAY was aborted"));
        AssertQuiet(server);
    }
}
