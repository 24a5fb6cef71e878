using System.Net;
using System.Net.Quic;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>Kestrel's HTTP/3 over QuicManaged's transport, called by .NET's own HttpClient (msquic) where libmsquic loads.</summary>
public sealed class KestrelTransportTests
{
    private static HttpClient MsQuicClient() => new(new SocketsHttpHandler
    {
        SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true },
    })
    {
        DefaultRequestVersion = HttpVersion.Version30,
        DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    [SkippableFact]
    public async Task DotNetHttpClientOverMsQuic_GetsAndPostsThroughOurTransport()
    {
        Skip.IfNot(QuicConnection.IsSupported, "libmsquic is not loadable (set LD_LIBRARY_PATH to a libmsquic build): .NET's HttpClient cannot speak HTTP/3");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        // libmsquic loads here, so Kestrel registered its own msquic transport too: UseQuicManaged must have replaced it.
        await using SampleServer server = await SampleServer.StartAsync(map: app =>
        {
            app.MapGet("/connection", (HttpContext context) => context.Connection.Id);
            app.MapPost("/sha256", async (HttpContext context) =>
                await context.Response.WriteAsync(Convert.ToHexString(await SHA256.HashDataAsync(context.Request.Body, context.RequestAborted))));
        });
        using HttpClient client = MsQuicClient();
        Assert.StartsWith("qm", await client.GetStringAsync(new Uri(server.BaseUri, "/connection"), timeout.Token), StringComparison.Ordinal);

        using HttpResponseMessage hello = await client.GetAsync(new Uri(server.BaseUri, "/hello"), timeout.Token);
        Assert.Equal(HttpVersion.Version30, hello.Version);
        Assert.Equal("hello over HTTP/3", await hello.Content.ReadAsStringAsync(timeout.Token));

        // A large upload is checked by its hash: SocketsHttpHandler reads no response body before its request body is
        // sent (non-duplex content), so a large echo can stall once the response fills its receive window.
        byte[] body = RandomNumberGenerator.GetBytes(3 * 1024 * 1024 + 17);
        using HttpResponseMessage hash = await client.PostAsync(new Uri(server.BaseUri, "/sha256"), new ByteArrayContent(body), timeout.Token);
        Assert.Equal(Convert.ToHexString(SHA256.HashData(body)), await hash.Content.ReadAsStringAsync(timeout.Token));
        byte[] small = RandomNumberGenerator.GetBytes(20_000);
        using HttpResponseMessage echo = await client.PostAsync(new Uri(server.BaseUri, "/echo"), new ByteArrayContent(small), timeout.Token);
        Assert.Equal(small, await echo.Content.ReadAsByteArrayAsync(timeout.Token));

        using HttpResponseMessage bytes = await client.GetAsync(new Uri(server.BaseUri, "/bytes/1000000"), timeout.Token);
        byte[] got = await bytes.Content.ReadAsByteArrayAsync(timeout.Token);
        Assert.Equal(1_000_000, got.Length);
        for (int i = 0; i < got.Length; i++)
        {
            Assert.Equal(SampleApp.PatternByte(i), got[i]);
        }
    }
}
