using System.Net;
using System.Net.Quic;
using System.Net.Security;
using System.Net.Sockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Xunit.Abstractions;

namespace QuicManaged.Http.Tests;

/// <summary>
/// Cancellation, timeouts and failures surface from <see cref="QuicManagedHttpHandler"/> as the same exception types and
/// <see cref="HttpRequestError"/> values as from SocketsHttpHandler's HTTP/3: each case asserts the expected shape for our
/// handler, and where libmsquic loads runs the same case through SocketsHttpHandler and asserts the two agree.
/// </summary>
public sealed class HandlerErrorMappingTests(ITestOutputHelper output)
{
    /// <summary>What a failure looked like: the exception's type, its HttpRequestError, its inner exception's type.</summary>
    private sealed record Shape(string Type, HttpRequestError? Error, string? Inner)
    {
        public static Shape Of(Exception ex) => new(ex.GetType().Name,
            ex switch { HttpRequestException h => h.HttpRequestError, HttpIOException io => io.HttpRequestError, _ => null },
            ex.InnerException?.GetType().Name);
    }

    private static HttpClient NewClient(string kind, TimeSpan? connectTimeout = null, bool trust = true)
    {
        RemoteCertificateValidationCallback validate = (_, _, _, _) => trust;
        HttpMessageHandler handler = kind == "managed"
            ? new QuicManagedHttpHandler { SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = validate }, ConnectTimeout = connectTimeout ?? Timeout.InfiniteTimeSpan }
            : new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = validate }, ConnectTimeout = connectTimeout ?? Timeout.InfiniteTimeSpan };
        return new HttpClient(handler)
        {
            DefaultRequestVersion = HttpVersion.Version30,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = TimeSpan.FromSeconds(60),
        };
    }

    /// <summary>Runs <paramref name="scenario"/> with our handler and, where libmsquic loads, with SocketsHttpHandler; returns ours.</summary>
    private async Task<Exception> CompareAsync(Func<string, Task<Exception>> scenario)
    {
        Exception ours = await scenario("managed");
        output.WriteLine($"QuicManagedHttpHandler: {ours.GetType().Name} {Shape.Of(ours)}: {ours.Message}");
        if (QuicConnection.IsSupported)
        {
            Exception theirs = await scenario("msquic");
            output.WriteLine($"SocketsHttpHandler:     {theirs.GetType().Name} {Shape.Of(theirs)}: {theirs.Message}");
            Assert.Equal(Shape.Of(theirs), Shape.Of(ours));
        }
        else
        {
            output.WriteLine("libmsquic is not loadable: SocketsHttpHandler's HTTP/3 not compared");
        }

        return ours;
    }

    /// <summary><see cref="CompareAsync"/> against the test server: a fresh server and client per run; the scenario gets them and the server's "/wait has started" signal.</summary>
    private Task<Exception> CompareOnServerAsync(Func<SampleServer, HttpClient, TaskCompletionSource, Task<Exception>> scenario, TimeSpan? connectTimeout = null, bool trust = true)
        => CompareAsync(async kind =>
        {
            var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            await using SampleServer server = await ServerAsync(started);
            using HttpClient client = NewClient(kind, connectTimeout, trust);
            return await scenario(server, client, started);
        });

    /// <summary>Asserts <paramref name="ex"/> is a cancellation for <paramref name="token"/>; returns it.</summary>
    private static Exception CanceledBy(Exception ex, CancellationToken token)
    {
        Assert.Equal(token, Assert.IsAssignableFrom<OperationCanceledException>(ex).CancellationToken);
        return ex;
    }

    /// <summary>A loopback UDP port bound and never read: datagrams to it get no answer (and no ICMP error).</summary>
    private static Socket SilentPort(out Uri uri)
    {
        var silent = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        silent.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        uri = new Uri($"https://127.0.0.1:{((IPEndPoint)silent.LocalEndPoint!).Port}/");
        return silent;
    }

    private static async Task<Exception> CatchAsync(Func<Task> action)
    {
        try
        {
            await action();
        }
#pragma warning disable CA1031 // the test inspects whatever was thrown
        catch (Exception ex)
#pragma warning restore CA1031
        {
            return ex;
        }

        throw new Xunit.Sdk.XunitException("no exception");
    }

    private static Task<SampleServer> ServerAsync(TaskCompletionSource started) => SampleServer.StartAsync(map: app =>
    {
        app.MapGet("/wait", async (HttpContext context) =>
        {
            started.TrySetResult();
            try
            {
                await Task.Delay(Timeout.Infinite, context.RequestAborted);
            }
            catch (OperationCanceledException)
            {
            }
        });
        app.MapGet("/abort", (HttpContext context) => context.Abort());
        app.MapGet("/abort-mid-body", async (HttpContext context) =>
        {
            await context.Response.Body.WriteAsync(new byte[4096]);
            await context.Response.Body.FlushAsync();
            await Task.Delay(100);
            context.Abort();
        });
        app.MapGet("/endless", async (HttpContext context) =>
        {
            byte[] chunk = new byte[4096];
            try
            {
                while (true)
                {
                    await context.Response.Body.WriteAsync(chunk, context.RequestAborted);
                    await Task.Delay(10, context.RequestAborted);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or IOException)
            {
            }
        });
    });

    [Fact]
    public async Task CancelBeforeTheResponse_IsTaskCanceledException_WithTheCallersToken()
    {
        Exception ours = await CompareOnServerAsync(async (server, client, started) =>
        {
            using var cancel = new CancellationTokenSource();
            Task<HttpResponseMessage> request = client.GetAsync(new Uri(server.BaseUri, "/wait"), cancel.Token);
            await started.Task.WaitAsync(TimeSpan.FromSeconds(60));
            await cancel.CancelAsync();
            return CanceledBy(await CatchAsync(() => request), cancel.Token);
        });
        Assert.IsType<TaskCanceledException>(ours);
    }

    [Fact]
    public async Task CancelWhileReadingTheBody_IsOperationCanceledException_WithTheCallersToken()
    {
        Exception ours = await CompareOnServerAsync(async (server, client, _) =>
        {
            using HttpResponseMessage response = await client.GetAsync(new Uri(server.BaseUri, "/endless"), HttpCompletionOption.ResponseHeadersRead);
            using Stream body = await response.Content.ReadAsStreamAsync();
            Assert.True(await body.ReadAsync(new byte[1024]) > 0);
            using var cancel = new CancellationTokenSource();
            return CanceledBy(await CatchAsync(async () =>
            {
                while (true)
                {
                    ValueTask<int> read = body.ReadAsync(new byte[1 << 20], cancel.Token);
                    await cancel.CancelAsync();
                    await read;
                }
            }), cancel.Token);
        });
        Assert.IsAssignableFrom<OperationCanceledException>(ours);
    }

    [Fact]
    public async Task ServerResetBeforeTheResponse_IsHttpRequestException_HttpProtocolError()
    {
        Exception ours = await CompareOnServerAsync((server, client, _) => CatchAsync(() => client.GetAsync(new Uri(server.BaseUri, "/abort"))));
        HttpRequestException e = Assert.IsType<HttpRequestException>(ours);
        Assert.Equal(HttpRequestError.HttpProtocolError, e.HttpRequestError);
        Assert.IsType<HttpProtocolException>(e.InnerException);
    }

    [Fact]
    public async Task ServerResetMidBody_IsHttpProtocolException()
    {
        Exception ours = await CompareOnServerAsync(async (server, client, _) =>
        {
            using HttpResponseMessage response = await client.GetAsync(new Uri(server.BaseUri, "/abort-mid-body"), HttpCompletionOption.ResponseHeadersRead);
            using Stream body = await response.Content.ReadAsStreamAsync();
            return await CatchAsync(async () =>
            {
                while (await body.ReadAsync(new byte[8192]) > 0)
                {
                }
            });
        });
        HttpProtocolException e = Assert.IsType<HttpProtocolException>(ours);
        Assert.Equal(HttpRequestError.HttpProtocolError, e.HttpRequestError);
    }

    [Fact]
    public async Task UntrustedCertificate_IsHttpRequestException_SecureConnectionError()
    {
        Exception ours = await CompareOnServerAsync((server, client, _) => CatchAsync(() => client.GetAsync(new Uri(server.BaseUri, "/wait"))), trust: false);
        HttpRequestException e = Assert.IsType<HttpRequestException>(ours);
        Assert.Equal(HttpRequestError.SecureConnectionError, e.HttpRequestError);
    }

    /// <summary>A port whose datagrams nobody answers (bound, never read): the handshake times out.</summary>
    [Fact]
    public async Task ServerNeverAnswers_HandshakeTimesOut_HttpRequestException_ConnectionError_SayingTimedOut()
    {
        using Socket silent = SilentPort(out Uri uri);
        Exception ours = await CompareAsync(async kind =>
        {
            using HttpClient client = NewClient(kind);
            return await CatchAsync(() => client.GetAsync(uri));
        });
        HttpRequestException e = Assert.IsType<HttpRequestException>(ours);
        Assert.Equal(HttpRequestError.ConnectionError, e.HttpRequestError);
        Assert.Contains("timed out after 10 s", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ConnectTimeoutElapses_IsTaskCanceledException_WithATimeoutExceptionSayingTimedOut()
    {
        using Socket silent = SilentPort(out Uri uri);
        Exception ours = await CompareAsync(async kind =>
        {
            using HttpClient client = NewClient(kind, connectTimeout: TimeSpan.FromMilliseconds(1500));
            return await CatchAsync(() => client.GetAsync(uri));
        });
        Assert.IsType<TaskCanceledException>(ours);
        TimeoutException timeout = Assert.IsType<TimeoutException>(ours.InnerException);
        Assert.Contains("timed out after 1500 ms (ConnectTimeout)", timeout.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ConnectTimeout_DefaultsToInfinite_AndRejectsZeroAsSocketsHttpHandlerDoes()
    {
        using var ours = new QuicManagedHttpHandler();
        using var theirs = new SocketsHttpHandler();
        Assert.Equal(theirs.ConnectTimeout, ours.ConnectTimeout);
        Assert.Equal(Timeout.InfiniteTimeSpan, ours.ConnectTimeout);
        Assert.Throws<ArgumentOutOfRangeException>(() => theirs.ConnectTimeout = TimeSpan.Zero);
        Assert.Throws<ArgumentOutOfRangeException>(() => ours.ConnectTimeout = TimeSpan.Zero);
        ours.ConnectTimeout = TimeSpan.FromSeconds(3);
        Assert.Equal(TimeSpan.FromSeconds(3), ours.ConnectTimeout);
    }
}
