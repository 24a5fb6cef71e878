using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using QuicManaged.Samples;

namespace QuicManaged.Http.Tests;

/// <summary>
/// The handler against a scripted HTTP/3 server (raw frames over our QuicListener): malformed responses become
/// HttpRequestExceptions carrying the RFC 9114 code, connection errors close the connection with it, GOAWAY moves
/// new requests to a new connection.
/// </summary>
public sealed class HandlerProtocolTests
{
    private static readonly byte[] s_settings = [0x00, 0x04, 0x00];                              // control stream: empty SETTINGS
    private static readonly byte[] s_ok = [0x01, 0x03, 0x00, 0x00, 0xD9, 0x00, 0x02, 0x68, 0x69];  // HEADERS :status 200, DATA "hi"

    /// <summary>A server that answers every request stream (after reading it whole) with the bytes its response function gives.</summary>
    private sealed class ScriptedServer : IAsyncDisposable
    {
        private readonly QuicListener _listener;
        private readonly CancellationTokenSource _stop = new();
        private readonly Task _loop;
        private readonly System.Security.Cryptography.X509Certificates.X509Certificate2 _certificate;
        private int _connections;

        private ScriptedServer(QuicListener listener, System.Security.Cryptography.X509Certificates.X509Certificate2 certificate, Func<int, byte[]> response, Func<int, byte[]?>? controlExtra)
        {
            _listener = listener;
            _certificate = certificate;
            _loop = AcceptLoopAsync(response, controlExtra);
        }

        public int Port => _listener.LocalEndPoint.Port;

        public int Connections => Volatile.Read(ref _connections);

        public TaskCompletionSource<long?> FirstCloseCode { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public static async Task<ScriptedServer> StartAsync(Func<int, byte[]> response, Func<int, byte[]?>? controlExtra = null)
        {
            var certificate = SampleApp.CreateSelfSignedCertificate();
            QuicListener listener = await QuicListener.ListenAsync(new QuicListenerOptions
            {
                ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
                ApplicationProtocols = [SslApplicationProtocol.Http3],
                ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
                {
                    ServerAuthenticationOptions = new SslServerAuthenticationOptions { ServerCertificate = certificate, ApplicationProtocols = [SslApplicationProtocol.Http3] },
                    DefaultStreamErrorCode = 0x10c,
                    DefaultCloseErrorCode = 0x100,
                    MaxInboundBidirectionalStreams = 100,
                    MaxInboundUnidirectionalStreams = 10,
                }),
            }, QuicProvider.Managed);
            return new ScriptedServer(listener, certificate, response, controlExtra);
        }

        private async Task AcceptLoopAsync(Func<int, byte[]> response, Func<int, byte[]?>? controlExtra)
        {
            try
            {
                while (true)
                {
                    QuicConnection connection = await _listener.AcceptConnectionAsync(_stop.Token);
                    int index = Interlocked.Increment(ref _connections) - 1;
                    _ = ServeAsync(connection, index, response, controlExtra);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or QuicException)
            {
            }
        }

        private async Task ServeAsync(QuicConnection connection, int index, Func<int, byte[]> response, Func<int, byte[]?>? controlExtra)
        {
            try
            {
                QuicStream control = await connection.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, _stop.Token);
                await control.WriteAsync(s_settings, _stop.Token);
                if (controlExtra?.Invoke(index) is byte[] extra)
                {
                    await control.WriteAsync(extra, _stop.Token);
                }

                while (true)
                {
                    QuicStream stream = await connection.AcceptInboundStreamAsync(_stop.Token);
                    if (stream.Type == QuicStreamType.Unidirectional)
                    {
                        _ = DrainAsync(stream);
                        continue;
                    }

                    _ = AnswerAsync(stream, response(index));
                }
            }
            catch (QuicException ex) when (ex.QuicError == QuicError.ConnectionAborted)
            {
                FirstCloseCode.TrySetResult(ex.ApplicationErrorCode);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or QuicException)
            {
            }
        }

        private static async Task DrainAsync(QuicStream stream)
        {
            try
            {
                byte[] buffer = new byte[256];
                while (await stream.ReadAsync(buffer) > 0)
                {
                }
            }
            catch (QuicException)
            {
            }
        }

        private static async Task AnswerAsync(QuicStream stream, byte[] response)
        {
            try
            {
                byte[] buffer = new byte[4096];
                while (await stream.ReadAsync(buffer) > 0)
                {
                }

                await stream.WriteAsync(response, completeWrites: true);
            }
            catch (QuicException)
            {
            }
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            await _listener.DisposeAsync();
            await _loop;
            _stop.Dispose();
            _certificate.Dispose();
        }
    }

    [Fact]
    public async Task DataBeforeHeaders_IsFrameUnexpected_AndClosesTheConnectionWithIt()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => [0x00, 0x02, 0x68, 0x69]);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token));
        Assert.Equal(HttpRequestError.HttpProtocolError, e.HttpRequestError);
        Assert.Equal(0x105, Assert.IsType<HttpProtocolException>(e.InnerException).ErrorCode);
        Assert.Equal(0x105L, await server.FirstCloseCode.Task.WaitAsync(timeout.Token)); // RFC 9114 §7.2.1: a connection error
    }

    [Fact]
    public async Task ContentLengthMismatch_IsMessageError_StreamOnly()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // HEADERS :status 200 + content-length: 5 (static index 4 with literal "5"), then DATA "hi" (2 bytes).
        byte[] response = [0x01, 0x06, 0x00, 0x00, 0xD9, 0x54, 0x01, 0x35, 0x00, 0x02, 0x68, 0x69];
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => response);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token));
        Assert.Equal(0x10e, Assert.IsType<HttpProtocolException>(e.InnerException).ErrorCode); // H3_MESSAGE_ERROR
        Assert.False(server.FirstCloseCode.Task.IsCompleted); // a stream error: the connection stays
    }

    [Fact]
    public async Task Goaway_NewRequestsGoToANewConnection()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // The first connection announces GOAWAY with id 0 right after SETTINGS: no request may start on it any more.
        // Whether the first request raced it (then it is retried) or not, later ones go to a second connection.
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_ok, index => index == 0 ? [0x07, 0x01, 0x00] : null);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token));
        await Task.Delay(200, timeout.Token);
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token));
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token));
        Assert.Equal(2, server.Connections);
    }
}
