using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>Our HTTP/3 handler against the sample app on Kestrel over our transport: neither side needs libmsquic.</summary>
public sealed class HandlerAgainstKestrelTests
{
    internal static HttpClient Client(out QuicManagedHttpHandler handler, HttpMessageHandler? fallback = null)
    {
        handler = new QuicManagedHttpHandler
        {
            SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, _, _, _) => true },
            FallbackHandler = fallback,
        };
        return new HttpClient(handler)
        {
            DefaultRequestVersion = HttpVersion.Version30,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = TimeSpan.FromSeconds(60),
        };
    }

    internal static void AssertPattern(byte[] body, int length)
    {
        Assert.Equal(length, body.Length);
        for (int i = 0; i < body.Length; i++)
        {
            if (body[i] != SampleApp.PatternByte(i))
            {
                Assert.Fail($"byte {i} is {body[i]}, expected {SampleApp.PatternByte(i)}");
            }
        }
    }

    [Fact]
    public async Task GetAndPostLargeBodies_ByteExact_OverOneConnection()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out _);

        using HttpResponseMessage hello = await client.GetAsync(new Uri(server.BaseUri, "/hello"), timeout.Token);
        Assert.Equal(HttpVersion.Version30, hello.Version);
        Assert.Equal(HttpStatusCode.OK, hello.StatusCode);
        Assert.Equal("hello over HTTP/3", await hello.Content.ReadAsStringAsync(timeout.Token));

        const int size = 5 * 1024 * 1024 + 3;
        byte[] got = await client.GetByteArrayAsync(new Uri(server.BaseUri, $"/bytes/{size}"), timeout.Token);
        AssertPattern(got, size);

        byte[] body = RandomNumberGenerator.GetBytes(4 * 1024 * 1024 + 11);
        using HttpResponseMessage echo = await client.PostAsync(new Uri(server.BaseUri, "/echo"), new ByteArrayContent(body), timeout.Token);
        Assert.Equal(HttpStatusCode.OK, echo.StatusCode);
        Assert.Equal(body, await echo.Content.ReadAsByteArrayAsync(timeout.Token));

        // Streaming request content of unknown length (no content-length): DATA frames until FIN.
        byte[] streamed = RandomNumberGenerator.GetBytes(1_000_000);
        using var unknownLength = new StreamContent(new NonSeekableStream(streamed));
        using HttpResponseMessage echo2 = await client.PostAsync(new Uri(server.BaseUri, "/echo"), unknownLength, timeout.Token);
        Assert.Equal(streamed, await echo2.Content.ReadAsByteArrayAsync(timeout.Token));
    }

    [Fact]
    public async Task ConcurrentRequests_ShareTheConnection_AllByteExact()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out _);
        Task<byte[]>[] requests = Enumerable.Range(0, 40)
            .Select(i => client.GetByteArrayAsync(new Uri(server.BaseUri, $"/bytes/{10_000 + i * 997}"), timeout.Token))
            .ToArray();
        byte[][] bodies = await Task.WhenAll(requests);
        for (int i = 0; i < bodies.Length; i++)
        {
            AssertPattern(bodies[i], 10_000 + i * 997);
        }
    }

    [Fact]
    public async Task ResponseTrailers_AreInTrailingHeaders()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out _);
        using HttpResponseMessage response = await client.GetAsync(new Uri(server.BaseUri, "/trailers"), timeout.Token);
        Assert.Equal("body with trailers", await response.Content.ReadAsStringAsync(timeout.Token));
        Assert.True(response.TrailingHeaders.TryGetValues("x-checksum", out IEnumerable<string>? values));
        Assert.Equal("42", Assert.Single(values));
    }

    [Fact]
    public async Task Expect100Continue_KestrelSends100_BodyFollowsIt_ByteExact()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out QuicManagedHttpHandler handler);
        // Far longer than the test may take: the body can only go out because Kestrel answered 100 (Continue) when
        // the endpoint started reading; the interim response is skipped.
        handler.Expect100ContinueTimeout = TimeSpan.FromMinutes(5);
        byte[] body = RandomNumberGenerator.GetBytes(300_000);
        using var content = new HandlerProtocolTests.TrackingContent(body);
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(server.BaseUri, "/echo")) { Content = content, Version = HttpVersion.Version30, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        request.Headers.ExpectContinue = true;
        using HttpResponseMessage response = await client.SendAsync(request, timeout.Token);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(body, await response.Content.ReadAsByteArrayAsync(timeout.Token));
        Assert.True(content.SerializedAtTicks > 0);
    }

    [Fact]
    public async Task Expect100Continue_FinalErrorStatusFirst_BodyNotSent_ConnectionStillServes()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out QuicManagedHttpHandler handler);
        handler.Expect100ContinueTimeout = TimeSpan.FromMinutes(5);
        // /hello only maps GET: the POST gets 405 without the endpoint reading the body, so Kestrel sends no 100.
        using var content = new HandlerProtocolTests.TrackingContent(RandomNumberGenerator.GetBytes(100_000));
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(server.BaseUri, "/hello")) { Content = content, Version = HttpVersion.Version30, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        request.Headers.ExpectContinue = true;
        using (HttpResponseMessage response = await client.SendAsync(request, timeout.Token))
        {
            Assert.Equal(HttpStatusCode.MethodNotAllowed, response.StatusCode);
            await response.Content.ReadAsByteArrayAsync(timeout.Token);
        }

        Assert.Equal(-1, content.SerializedAtTicks);
        Assert.Equal("hello over HTTP/3", await client.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
    }

    [Fact]
    public async Task Cancellation_MidBody_ThrowsOperationCanceled_AndTheConnectionStillServes()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient client = Client(out _);
        using var cancel = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        using HttpResponseMessage big = await client.GetAsync(new Uri(server.BaseUri, $"/bytes/{SampleApp.MaxBytes}"), HttpCompletionOption.ResponseHeadersRead, cancel.Token);
        await using Stream body = await big.Content.ReadAsStreamAsync(timeout.Token);
        byte[] buffer = new byte[64 * 1024];
        Assert.True(await body.ReadAsync(buffer, cancel.Token) > 0);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            while (await body.ReadAsync(buffer, cancel.Token) > 0)
            {
            }
        });

        // Cancelled before the response: the request throws TaskCanceledException (HttpClient's contract).
        using var already = new CancellationTokenSource();
        await already.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.GetAsync(new Uri(server.BaseUri, "/hello"), already.Token));

        Assert.Equal("hello over HTTP/3", await client.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
    }

    [Fact]
    public async Task AltSvc_OnHttp2_AdvertisesH3OnTheSamePort()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await using SampleServer server = await SampleServer.StartAsync();
        using var tcp = new HttpClient(new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true } })
        {
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        using HttpResponseMessage response = await tcp.GetAsync(new Uri(server.BaseUri, "/hello"), timeout.Token);
        Assert.Equal("hello over HTTP/2", await response.Content.ReadAsStringAsync(timeout.Token));
        Assert.Contains($"h3=\":{server.Port}\"", string.Join(",", response.Headers.GetValues("alt-svc")), StringComparison.Ordinal);
    }

    [Fact]
    public async Task VersionPolicy_ExactBelow3WithoutFallback_AndHttpScheme_ThrowHttpRequestException()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        using HttpClient client = Client(out _);
        using var http11 = new HttpRequestMessage(HttpMethod.Get, "https://127.0.0.1:1/") { Version = HttpVersion.Version11, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        HttpRequestException e1 = await Assert.ThrowsAsync<HttpRequestException>(() => client.SendAsync(http11, timeout.Token));
        Assert.Equal(HttpRequestError.VersionNegotiationError, e1.HttpRequestError);
        HttpRequestException e2 = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri("http://127.0.0.1:1/"), timeout.Token));
        Assert.Equal(HttpRequestError.VersionNegotiationError, e2.HttpRequestError);
    }

    [Fact]
    public async Task VersionPolicy_OrLower_FallsBackToTheFallbackHandler_WhenNoHttp3Server()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        // HTTP/1.1 and HTTP/2 only: no QUIC listener, so HTTP/3 cannot connect and OrLower falls back.
        await using SampleServer server = await SampleServer.StartAsync(Microsoft.AspNetCore.Server.Kestrel.Core.HttpProtocols.Http1AndHttp2);
        using HttpClient client = Client(out QuicManagedHttpHandler handler, new SocketsHttpHandler
        {
            SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true },
        });
        handler.ConnectTimeout = TimeSpan.FromSeconds(2);
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(server.BaseUri, "/protocol")) { Version = HttpVersion.Version30, VersionPolicy = HttpVersionPolicy.RequestVersionOrLower };
        using HttpResponseMessage response = await client.SendAsync(request, timeout.Token);
        Assert.Equal("HTTP/2", await response.Content.ReadAsStringAsync(timeout.Token));

        using var exact = new HttpRequestMessage(HttpMethod.Get, new Uri(server.BaseUri, "/protocol")) { Version = HttpVersion.Version30, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.SendAsync(exact, timeout.Token));
        Assert.Equal(HttpRequestError.ConnectionError, e.HttpRequestError);
    }

    [Fact]
    public async Task ServerResetBeforeHeaders_IsHttpRequestExceptionWithHttpProtocolException()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync(map: app => app.MapGet("/abort", (HttpContext context) => context.Abort()));
        using HttpClient client = Client(out _);
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri(server.BaseUri, "/abort"), timeout.Token));
        Assert.Equal(HttpRequestError.HttpProtocolError, e.HttpRequestError);
        HttpProtocolException protocol = Assert.IsType<HttpProtocolException>(e.InnerException);
        Assert.Equal(0x102, protocol.ErrorCode); // H3_INTERNAL_ERROR: Kestrel resets the stream of a request the app aborts with it
        Assert.Equal("hello over HTTP/3", await client.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
    }

    private sealed class NonSeekableStream(byte[] data) : MemoryStream(data)
    {
        public override bool CanSeek => false;
    }
}
