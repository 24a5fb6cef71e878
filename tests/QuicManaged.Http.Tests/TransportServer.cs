using System.Collections.Concurrent;
using System.Net;
using System.Net.Quic;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>
/// Kestrel serving HTTP/3 only, over QuicManaged's transport ("managed") or Kestrel's own msquic transport ("msquic"),
/// with every log entry captured; the same endpoints either way, so the two transports can be compared.
/// </summary>
internal sealed class TransportServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private bool _stopped;

    private TransportServer(WebApplication app, int port, X509Certificate2 certificate, CapturingLoggerProvider logs)
    {
        _app = app;
        Port = port;
        Certificate = certificate;
        Logs = logs;
    }

    public int Port { get; }

    public X509Certificate2 Certificate { get; }

    public CapturingLoggerProvider Logs { get; }

    public Uri BaseUri => new($"https://127.0.0.1:{Port}");

    /// <summary>Why <paramref name="transport"/> (or <paramref name="client"/>) cannot run here; null when both can.</summary>
    public static string? Unavailable(string transport, string client = "managed")
        => (transport == "msquic" || client == "msquic") && !QuicListener.IsSupported
            ? "libmsquic is not loadable (set LD_LIBRARY_PATH to a libmsquic build): Kestrel's msquic transport and SocketsHttpHandler's HTTP/3 need it"
            : null;

    public static async Task<TransportServer> StartAsync(string transport, Action<WebApplication> map)
    {
        X509Certificate2 certificate = SampleApp.CreateSelfSignedCertificate();
        for (int attempt = 0; ; attempt++)
        {
            int port = SampleServer.FreePort();
            var logs = new CapturingLoggerProvider();
            WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            builder.Logging.SetMinimumLevel(LogLevel.Trace);
            builder.Logging.AddProvider(logs);
            if (transport == "managed")
            {
                builder.WebHost.UseQuicManaged();
            }
            else
            {
                builder.WebHost.UseQuic();
            }

            builder.WebHost.ConfigureKestrel(kestrel =>
            {
                kestrel.Listen(IPAddress.Loopback, port, listen =>
                {
                    listen.Protocols = HttpProtocols.Http3;
                    listen.UseHttps(certificate);
                });
            });
            WebApplication app = builder.Build();
            map(app);
            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
                await app.StartAsync(timeout.Token);
                return new TransportServer(app, port, certificate, logs);
            }
            catch (IOException) when (attempt < 3)
            {
                await app.DisposeAsync();
            }
        }
    }

    /// <summary>An HTTP/3-only client: our handler ("managed") or SocketsHttpHandler over msquic ("msquic").</summary>
    public static HttpClient Client(string client) => new(client == "managed"
        ? new QuicManagedHttpHandler { SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, _, _, _) => true } }
        : new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true } })
    {
        DefaultRequestVersion = HttpVersion.Version30,
        DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        Timeout = TimeSpan.FromSeconds(60),
    };

    /// <summary>Stops the host (GOAWAY to the clients, then the connections close) and waits for it.</summary>
    public async Task StopAsync()
    {
        if (_stopped)
        {
            return;
        }

        _stopped = true;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await _app.StopAsync(timeout.Token);
    }

    /// <summary>Log entries above Debug, leaving out the per-request and lifetime Information lines of the hosting layer.</summary>
    public IReadOnlyList<string> NoisyEntries() => Logs.Entries
        .Where(static e => e.Level > LogLevel.Debug)
        .Where(static e => !(e.Level == LogLevel.Information && e.Category.StartsWith("Microsoft.", StringComparison.Ordinal)
            && (e.Category.StartsWith("Microsoft.AspNetCore.Hosting", StringComparison.Ordinal) || e.Category.StartsWith("Microsoft.Hosting", StringComparison.Ordinal)
                || e.Category.StartsWith("Microsoft.AspNetCore.Routing", StringComparison.Ordinal))))
        .Select(static e => $"{e.Level} {e.Category}: {e.Message}{(e.Exception is null ? "" : " | " + e.Exception.GetType().Name + ": " + e.Exception.Message)}")
        .ToList();

    public async ValueTask DisposeAsync()
    {
        try
        {
            await StopAsync();
        }
        finally
        {
            await _app.DisposeAsync();
            Certificate.Dispose();
        }
    }
}

/// <summary>Keeps every log entry of the host (any level, any category).</summary>
internal sealed class CapturingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<Entry> _entries = new();

    public IReadOnlyCollection<Entry> Entries => _entries;

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    internal sealed record Entry(string Category, LogLevel Level, EventId Id, string Message, Exception? Exception);

    private sealed class Logger(CapturingLoggerProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => provider._entries.Enqueue(new Entry(category, logLevel, eventId, formatter(state, exception), exception));
    }
}
