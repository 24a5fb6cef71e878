using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>The sample app (samples/Http3Server) in-process on a free loopback port, HTTP/3 over QuicManaged's transport.</summary>
internal sealed class SampleServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private SampleServer(WebApplication app, int port, X509Certificate2 certificate)
    {
        _app = app;
        Port = port;
        Certificate = certificate;
    }

    public int Port { get; }

    public X509Certificate2 Certificate { get; }

    public bool Tls { get; private init; } = true;

    public Uri BaseUri => new($"{(Tls ? "https" : "http")}://127.0.0.1:{Port}");

    /// <summary>The sample app over plain HTTP/1.1 (a backend for a proxy under test).</summary>
    public static async Task<SampleServer> StartPlainHttpAsync()
    {
        int port = FreePort();
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen => listen.Protocols = HttpProtocols.Http1));
        WebApplication app = builder.Build();
        SampleApp.Map(app);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await app.StartAsync(timeout.Token);
        return new SampleServer(app, port, SampleApp.CreateSelfSignedCertificate()) { Tls = false };
    }

    public static async Task<SampleServer> StartAsync(HttpProtocols protocols = HttpProtocols.Http1AndHttp2AndHttp3, Action<WebApplication>? map = null)
    {
        X509Certificate2 certificate = SampleApp.CreateSelfSignedCertificate();
        for (int attempt = 0; ; attempt++)
        {
            int port = FreePort();
            WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            if (Environment.GetEnvironmentVariable("QUICMANAGED_TEST_LOG") == "1")
            {
                builder.Logging.AddSimpleConsole().SetMinimumLevel(LogLevel.Debug);
            }

            builder.WebHost.UseQuicManaged();
            builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen =>
            {
                listen.Protocols = protocols;
                listen.UseHttps(certificate);
            }));
            WebApplication app = builder.Build();
            SampleApp.Map(app);
            map?.Invoke(app);
            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
                await app.StartAsync(timeout.Token);
                return new SampleServer(app, port, certificate);
            }
            catch (IOException) when (attempt < 3)
            {
                await app.DisposeAsync();
            }
        }
    }

    /// <summary>A port free for both TCP and UDP right now (Kestrel binds both for HTTP/1+2+3).</summary>
    public static int FreePort()
    {
        while (true)
        {
            using var udp = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            udp.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            int port = ((IPEndPoint)udp.LocalEndPoint!).Port;
            using var tcp = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                tcp.Bind(new IPEndPoint(IPAddress.Loopback, port));
                return port;
            }
            catch (SocketException)
            {
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            await _app.StopAsync(timeout.Token);
        }
        finally
        {
            await _app.DisposeAsync();
            Certificate.Dispose();
        }
    }
}
