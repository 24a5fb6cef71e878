// Kestrel's HTTP/3 over QuicManaged's transport vs over msquic (Kestrel's own UseQuic): requests per second for a small
// response with N concurrent requests on one connection. Server and client run in this process.
//
//   dotnet run -c Release --project benchmarks/Http3Kestrel -- [--server managed|msquic] [--client managed|msquic]
//                                                              [--concurrency 100] [--seconds 10]
// msquic needs libmsquic on LD_LIBRARY_PATH (server msquic: Kestrel's transport; client msquic: SocketsHttpHandler).
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

string server = "managed", clientKind = "managed";
int concurrency = 100, seconds = 10;
for (int i = 0; i < args.Length; i++)
{
    string value = i + 1 < args.Length ? args[i + 1] : throw new ArgumentException($"{args[i]} needs a value");
    switch (args[i])
    {
        case "--server": server = value; i++; break;
        case "--client": clientKind = value; i++; break;
        case "--concurrency": concurrency = int.Parse(value, CultureInfo.InvariantCulture); i++; break;
        case "--seconds": seconds = int.Parse(value, CultureInfo.InvariantCulture); i++; break;
        default: throw new ArgumentException($"unknown option {args[i]}");
    }
}

if ((server == "msquic" || clientKind == "msquic") && !System.Net.Quic.QuicListener.IsSupported)
{
    Console.Error.WriteLine("msquic is not loadable: put libmsquic on LD_LIBRARY_PATH");
    return 2;
}

using X509Certificate2 certificate = CreateCertificate();
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
app.MapGet("/", () => Results.Text("hello"));
await app.StartAsync();

HttpMessageHandler handler = clientKind == "managed"
    ? new QuicManagedHttpHandler { SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, _, _, _) => true } }
    : new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true } };
using var client = new HttpClient(handler) { DefaultRequestVersion = HttpVersion.Version30, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
var uri = new Uri($"https://127.0.0.1:{port}/");
if (await client.GetStringAsync(uri) != "hello")
{
    Console.Error.WriteLine("unexpected response");
    return 1;
}

long completed = 0, failed = 0;
using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
var stopwatch = Stopwatch.StartNew();
Task[] workers = Enumerable.Range(0, concurrency).Select(async _ =>
{
    while (!stop.IsCancellationRequested)
    {
        try
        {
            using HttpResponseMessage response = await client.GetAsync(uri, stop.Token);
            await response.Content.ReadAsByteArrayAsync(stop.Token);
            Interlocked.Increment(ref completed);
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
await Task.WhenAll(workers);
double elapsed = stopwatch.Elapsed.TotalSeconds;
Console.WriteLine($"server {server}, client {clientKind}, {concurrency} concurrent, {seconds} s: {completed / elapsed:F0} requests/s ({completed} ok, {failed} failed)");
await app.StopAsync();
return 0;

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
