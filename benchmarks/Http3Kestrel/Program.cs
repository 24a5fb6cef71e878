// Kestrel's HTTP/3 over QuicManaged's transport or over msquic (Kestrel's own UseQuic), called by QuicManagedHttpHandler
// or by SocketsHttpHandler (msquic): requests per second for a small response with N concurrent requests on one
// connection, with the allocations and CPU time per request. Server and client run in this process. Several servers and
// clients and --rounds alternate every combination within one run, so the ratios come from the same conditions.
//
//   dotnet run -c Release --project benchmarks/Http3Kestrel -- --help
// msquic needs libmsquic on LD_LIBRARY_PATH (server msquic: Kestrel's transport; client msquic: SocketsHttpHandler).
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using QuicManaged.Http;

string[] kinds = ["managed", "msquic"];
var serverOption = new Option<string[]>("--server")
{
    Description = "Kestrel's QUIC transport: managed (UseQuicManaged) or msquic (UseQuic); several (--server managed msquic) alternate.",
    DefaultValueFactory = _ => ["managed"],
    AllowMultipleArgumentsPerToken = true,
};
var clientOption = new Option<string[]>("--client")
{
    Description = "HTTP/3 client: managed (QuicManagedHttpHandler) or msquic (SocketsHttpHandler); several alternate.",
    DefaultValueFactory = _ => ["managed"],
    AllowMultipleArgumentsPerToken = true,
};
serverOption.AcceptOnlyFromAmong(kinds);
clientOption.AcceptOnlyFromAmong(kinds);
var concurrencyOption = new Option<int>("--concurrency") { Description = "Requests in flight at once on the one connection.", DefaultValueFactory = _ => 100 };
var secondsOption = new Option<double>("--seconds") { Description = "Measured seconds of each run.", DefaultValueFactory = _ => 10 };
var warmupOption = new Option<double>("--warmup") { Description = "Seconds of requests before each measurement (not counted).", DefaultValueFactory = _ => 2 };
var roundsOption = new Option<int>("--rounds") { Description = "How many times every server x client combination runs, alternating.", DefaultValueFactory = _ => 1 };
var sizeOption = new Option<int>("--size") { Description = "Bytes of each response body.", DefaultValueFactory = _ => 5 };
var exceptionsOption = new Option<bool>("--exceptions") { Description = "Also print, per run (warm-up included), the exceptions raised in the process (first chance: client and server) by type and message, most frequent first." };
var allocationsOption = new Option<bool>("--allocations") { Description = "Also print, per run, the types allocated most (sampled by the runtime's AllocationTick events, about one per 100 KB)." };
foreach (Option<int> positive in new[] { concurrencyOption, roundsOption })
{
    positive.Validators.Add(r => { if (r.GetValueOrDefault<int>() <= 0) r.AddError($"{r.Option.Name} must be positive"); });
}

sizeOption.Validators.Add(r => { if (r.GetValueOrDefault<int>() < 0) r.AddError("--size must not be negative"); });
secondsOption.Validators.Add(r => { if (r.GetValueOrDefault<double>() <= 0) r.AddError("--seconds must be positive"); });
warmupOption.Validators.Add(r => { if (r.GetValueOrDefault<double>() < 0) r.AddError("--warmup must not be negative"); });

var root = new RootCommand(
    "Kestrel HTTP/3 requests per second over QuicManaged's transport or msquic, with QuicManagedHttpHandler or SocketsHttpHandler " +
    "(server and client in this process). Prints one line per run, then per combination the median requests/s, bytes allocated and " +
    "CPU time per request (the whole process: server and client), and the ratio to the msquic/msquic pair when it ran.")
{
    serverOption, clientOption, concurrencyOption, secondsOption, warmupOption, roundsOption, sizeOption, allocationsOption, exceptionsOption,
};
root.SetAction((parse, cancellationToken) => RunAsync(
    parse.GetValue(serverOption)!.Distinct().ToArray(), parse.GetValue(clientOption)!.Distinct().ToArray(), parse.GetValue(concurrencyOption),
    parse.GetValue(secondsOption), parse.GetValue(warmupOption), parse.GetValue(roundsOption), parse.GetValue(sizeOption), parse.GetValue(allocationsOption), parse.GetValue(exceptionsOption)));
return await root.Parse(args).InvokeAsync();

static async Task<int> RunAsync(string[] servers, string[] clients, int concurrency, double seconds, double warmup, int rounds, int size, bool allocations, bool exceptions)
{
    var raised = new System.Collections.Concurrent.ConcurrentDictionary<string, int>();
    if (exceptions)
    {
        AppDomain.CurrentDomain.FirstChanceException += (_, e) => raised.AddOrUpdate(e.Exception.GetType().Name + ": " + e.Exception.Message, 1, static (_, n) => n + 1);
    }

    if ((servers.Contains("msquic") || clients.Contains("msquic")) && !System.Net.Quic.QuicListener.IsSupported)
    {
        Console.Error.WriteLine("msquic is not loadable: put libmsquic on LD_LIBRARY_PATH");
        return 2;
    }

    using X509Certificate2 certificate = CreateCertificate();
    byte[] body = new byte[size];
    "hello"u8[..Math.Min(5, size)].CopyTo(body);
    var results = new Dictionary<(string Server, string Client), List<Run>>();
    for (int round = 1; round <= rounds; round++)
    {
        foreach (string server in servers)
        {
            foreach (string client in clients)
            {
                using AllocationSampler? sampler = allocations ? new AllocationSampler() : null;
                raised.Clear();
                Run run = await RunOnceAsync(certificate, server, client, body, concurrency, seconds, warmup, sampler);
                if (run.Failed < 0)
                {
                    return 1;
                }

                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"round {round}: server {server}, client {client}, {concurrency} concurrent, {seconds} s: {run.RequestsPerSecond:F0} requests/s, " +
                    $"{run.BytesPerRequest:F0} B allocated/request, {run.CpuMicrosecondsPerRequest:F0} us CPU/request, {run.Gen0} gen0 GCs ({run.Completed} ok, {run.Failed} failed)"));
                sampler?.Print(run.Completed);
                foreach ((string what, int count) in raised.OrderByDescending(static p => p.Value).Take(8))
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"        {count,8} x  {what}"));
                }
                (results.TryGetValue((server, client), out List<Run>? list) ? list : results[(server, client)] = []).Add(run);
            }
        }
    }

    double? baseline = results.TryGetValue(("msquic", "msquic"), out List<Run>? reference) ? Median(reference, static r => r.RequestsPerSecond) : null;
    Console.WriteLine($"median of {rounds} round(s):");
    foreach (((string server, string client), List<Run> runs) in results)
    {
        double rps = Median(runs, static r => r.RequestsPerSecond);
        string ratio = baseline is double b ? string.Create(CultureInfo.InvariantCulture, $", {rps / b:F2}x msquic/msquic") : "";
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  server {server,-7} client {client,-7} {rps,8:F0} requests/s, {Median(runs, static r => r.BytesPerRequest),6:F0} B/request, {Median(runs, static r => r.CpuMicrosecondsPerRequest),5:F0} us CPU/request{ratio}"));
    }

    return 0;
}

static async Task<Run> RunOnceAsync(X509Certificate2 certificate, string server, string clientKind, byte[] body, int concurrency, double seconds, double warmup, AllocationSampler? sampler)
{
    int port = FreeUdpPort();
    WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
    builder.Logging.ClearProviders();
    if (server == "managed")
    {
        builder.WebHost.UseQuicManaged();
    }
    else
    {
        builder.WebHost.UseQuic(); // the slim builder registers no QUIC transport by itself
    }

    builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen =>
    {
        listen.Protocols = HttpProtocols.Http3;
        listen.UseHttps(certificate);
    }));
    await using WebApplication app = builder.Build();
    app.MapGet("/", () => Results.Bytes(body, "text/plain"));
    await app.StartAsync();

    HttpMessageHandler handler = clientKind == "managed"
        ? new QuicManagedHttpHandler { SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, _, _, _) => true } }
        : new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true } };
    using var client = new HttpClient(handler) { DefaultRequestVersion = HttpVersion.Version30, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
    var uri = new Uri($"https://127.0.0.1:{port}/");
    if (!(await client.GetByteArrayAsync(uri)).AsSpan().SequenceEqual(body))
    {
        Console.Error.WriteLine("unexpected response");
        return new Run(0, 0, -1, 0, 0, 0);
    }

    long completed = 0, failed = 0;
    bool measuring = warmup == 0;
    using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(warmup + seconds));
    Task[] workers = Enumerable.Range(0, concurrency).Select(async _ =>
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                using HttpResponseMessage response = await client.GetAsync(uri, stop.Token);
                await response.Content.ReadAsByteArrayAsync(stop.Token);
                if (Volatile.Read(ref measuring))
                {
                    Interlocked.Increment(ref completed);
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
            }
            catch (HttpRequestException)
            {
                Interlocked.Increment(ref failed);
            }
        }
    }).ToArray();
    if (warmup > 0)
    {
        await Task.Delay(TimeSpan.FromSeconds(warmup));
    }

    long bytesBefore = GC.GetTotalAllocatedBytes(precise: false);
    TimeSpan cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
    int gen0Before = GC.CollectionCount(0);
    var stopwatch = Stopwatch.StartNew();
    Volatile.Write(ref measuring, true);
    sampler?.Start();
    await Task.WhenAll(workers);
    sampler?.Stop();
    double elapsed = stopwatch.Elapsed.TotalSeconds;
    long done = Interlocked.Read(ref completed);
    long bytes = GC.GetTotalAllocatedBytes(precise: false) - bytesBefore;
    double cpu = (Process.GetCurrentProcess().TotalProcessorTime - cpuBefore).TotalMicroseconds;
    int gen0 = GC.CollectionCount(0) - gen0Before;
    await app.StopAsync();
    long per = Math.Max(1, done);
    return new Run(done / elapsed, done, failed, (double)bytes / per, cpu / per, gen0);
}

static double Median(List<Run> runs, Func<Run, double> value)
{
    double[] sorted = runs.Select(value).Order().ToArray();
    return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
}

static X509Certificate2 CreateCertificate()
{
    using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
    var san = new SubjectAlternativeNameBuilder();
    san.AddIpAddress(IPAddress.Loopback);
    san.AddDnsName("localhost");
    request.CertificateExtensions.Add(san.Build());
    using X509Certificate2 certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
    return X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pkcs12), null);
}

static int FreeUdpPort()
{
    using var udp = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    udp.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    return ((IPEndPoint)udp.LocalEndPoint!).Port;
}

internal sealed record Run(double RequestsPerSecond, long Completed, long Failed, double BytesPerRequest, double CpuMicrosecondsPerRequest, int Gen0);

/// <summary>Counts the runtime's AllocationTick samples by type while started (one sample per ~100 KB allocated).</summary>
internal sealed class AllocationSampler : System.Diagnostics.Tracing.EventListener
{
    private readonly Dictionary<string, long> _bytes = [];
    private volatile bool _on;

    public void Start() => _on = true;

    public void Stop() => _on = false;

    protected override void OnEventSourceCreated(System.Diagnostics.Tracing.EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime")
        {
            EnableEvents(source, System.Diagnostics.Tracing.EventLevel.Verbose, (System.Diagnostics.Tracing.EventKeywords)0x1); // GC: AllocationTick
        }
    }

    protected override void OnEventWritten(System.Diagnostics.Tracing.EventWrittenEventArgs e)
    {
        if (!_on || e.EventName is not string name || !name.StartsWith("GCAllocationTick", StringComparison.Ordinal) || e.Payload is null || e.PayloadNames is null)
        {
            return;
        }

        int typeIndex = e.PayloadNames.IndexOf("TypeName");
        int amountIndex = e.PayloadNames.IndexOf("AllocationAmount64");
        string type = typeIndex >= 0 ? e.Payload[typeIndex] as string ?? "?" : "?";
        long amount = amountIndex >= 0 ? Convert.ToInt64(e.Payload[amountIndex], CultureInfo.InvariantCulture) : 100_000;
        lock (_bytes)
        {
            _bytes[type] = _bytes.GetValueOrDefault(type) + amount;
        }
    }

    public void Print(long requests)
    {
        lock (_bytes)
        {
            foreach ((string type, long bytes) in _bytes.OrderByDescending(static p => p.Value).Take(25))
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"    {bytes / (double)Math.Max(1, requests),8:F0} B/request  {type}"));
            }
        }
    }
}
