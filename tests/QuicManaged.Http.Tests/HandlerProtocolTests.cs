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

        private readonly List<byte> _decoderStream = new();
        private Task _responseGate = Task.CompletedTask;
        private int _requestStreams;
        private readonly Func<int, (byte[] Bytes, int DelayMs)?>? _encoderStream;

        private ScriptedServer(QuicListener listener, System.Security.Cryptography.X509Certificates.X509Certificate2 certificate, Func<int, byte[]> response, Func<int, byte[]?>? controlExtra,
            Func<int, (byte[] Bytes, int DelayMs)?>? encoderStream)
        {
            _listener = listener;
            _certificate = certificate;
            _encoderStream = encoderStream;
            _loop = AcceptLoopAsync(response, controlExtra);
        }

        /// <summary>What the client sent on its QPACK decoder stream (after the stream type), all connections together.</summary>
        public byte[] DecoderStreamBytes
        {
            get
            {
                lock (_decoderStream)
                {
                    return _decoderStream.ToArray();
                }
            }
        }

        public int Port => _listener.LocalEndPoint.Port;

        public int Connections => Volatile.Read(ref _connections);

        /// <summary>Request streams accepted so far, all connections together.</summary>
        public int RequestStreams => Volatile.Read(ref _requestStreams);

        public TaskCompletionSource<long?> FirstCloseCode { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public static async Task<ScriptedServer> StartAsync(Func<int, byte[]> response, Func<int, byte[]?>? controlExtra = null,
            Func<int, (byte[] Bytes, int DelayMs)?>? encoderStream = null, int maxRequestStreams = 100, Task? responseGate = null)
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
                    MaxInboundBidirectionalStreams = maxRequestStreams,
                    MaxInboundUnidirectionalStreams = 10,
                }),
            }, QuicProvider.Managed);
            return new ScriptedServer(listener, certificate, response, controlExtra, encoderStream) { _responseGate = responseGate ?? Task.CompletedTask };
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

                if (_encoderStream?.Invoke(index) is (byte[] instructions, int delayMs))
                {
                    _ = WriteEncoderStreamAsync(connection, instructions, delayMs);
                }

                while (true)
                {
                    QuicStream stream = await connection.AcceptInboundStreamAsync(_stop.Token);
                    if (stream.Type == QuicStreamType.Unidirectional)
                    {
                        _ = DrainAsync(stream);
                        continue;
                    }

                    Interlocked.Increment(ref _requestStreams);
                    _ = AnswerAsync(stream, response(index), _responseGate);
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

        /// <summary>Our QPACK encoder stream (type 0x02), written after a delay so that responses can arrive first and block.</summary>
        private async Task WriteEncoderStreamAsync(QuicConnection connection, byte[] instructions, int delayMs)
        {
            try
            {
                QuicStream encoder = await connection.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, _stop.Token);
                await encoder.WriteAsync(new byte[] { 0x02 }, _stop.Token);
                await Task.Delay(delayMs, _stop.Token);
                await encoder.WriteAsync(instructions, _stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or QuicException)
            {
            }
        }

        private async Task DrainAsync(QuicStream stream)
        {
            try
            {
                byte[] buffer = new byte[256];
                bool first = true;
                bool decoder = false;
                int n;
                while ((n = await stream.ReadAsync(buffer)) > 0)
                {
                    int start = 0;
                    if (first)
                    {
                        first = false;
                        decoder = buffer[0] == 0x03;
                        start = 1;
                    }

                    if (decoder)
                    {
                        lock (_decoderStream)
                        {
                            _decoderStream.AddRange(buffer.AsSpan(start, n - start));
                        }
                    }
                }
            }
            catch (QuicException)
            {
            }
        }

        private static async Task AnswerAsync(QuicStream stream, byte[] response, Task gate)
        {
            try
            {
                byte[] buffer = new byte[4096];
                while (await stream.ReadAsync(buffer) > 0)
                {
                }

                await gate;

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

    [Fact]
    public async Task Goaway_WithTheLargestId_AsKestrelStartsItsShutdown_IsNoConnectionError()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // Kestrel's graceful shutdown first sends GOAWAY with 2^62-1 (not a client-initiated bidirectional id): the
        // connection drains like for any GOAWAY instead of failing with H3_ID_ERROR, as with SocketsHttpHandler.
        byte[] largest = [0x07, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_ok, index => index == 0 ? largest : null);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token));
        await Task.Delay(200, timeout.Token);
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token));
        if (server.FirstCloseCode.Task.IsCompleted)
        {
            Assert.NotEqual(0x108L, await server.FirstCloseCode.Task); // not H3_ID_ERROR
        }
    }

    // QPACK dynamic table (RFC 9204) as the server's encoder uses it: capacity 220, insert ":status: 200" by static name
    // reference (index 25) and the literal "x-dyn: yes"; the response section has Required Insert Count 2 (encoded 3),
    // Base 2, and references both by relative index.
    private static readonly byte[] s_encoderInserts = [0x3f, 0xbd, 0x01, 0xd9, 0x03, 0x32, 0x30, 0x30, 0x45, 0x78, 0x2d, 0x64, 0x79, 0x6e, 0x03, 0x79, 0x65, 0x73];
    private static readonly byte[] s_dynamicOk = [0x01, 0x04, 0x03, 0x00, 0x81, 0x80, 0x00, 0x02, 0x68, 0x69];

    [Fact]
    public async Task DynamicTable_ResponseBlockedUntilInsertsArrive_ThenDecodedAndAcknowledged()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // The inserts arrive 300 ms after the response: the response stream is blocked until then (RFC 9204 §2.1.2).
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_dynamicOk, encoderStream: _ => (s_encoderInserts, 300));
        using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        using HttpResponseMessage response = await client.GetAsync(uri, timeout.Token);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("yes", Assert.Single(response.Headers.GetValues("x-dyn")));
        Assert.Equal("hi", await response.Content.ReadAsStringAsync(timeout.Token));
        Assert.Equal(2, handler.GetPooledConnection(uri)!.Qpack.InsertCount);

        // The decoder stream carries Section Acknowledgment for stream 0 (0x80), possibly after an Insert Count
        // Increment of 2 (0x02) if the inserts were acknowledged before the section was decoded.
        while (server.DecoderStreamBytes.Length == 0 || server.DecoderStreamBytes[^1] != 0x80)
        {
            await Task.Delay(20, timeout.Token);
        }

        Assert.Contains(Convert.ToHexString(server.DecoderStreamBytes), new[] { "80", "0280" });
    }

    [Fact]
    public async Task DynamicTable_ResponseTrailersReferenceIt_InTrailingHeaders()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // HEADERS and DATA as above, then trailers: Required Insert Count 2, Base 2, relative index 0 (x-dyn: yes).
        byte[] response = [.. s_dynamicOk, 0x01, 0x03, 0x03, 0x00, 0x80];
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => response, encoderStream: _ => (s_encoderInserts, 0));
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        using HttpResponseMessage message = await client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token);
        Assert.Equal("hi", await message.Content.ReadAsStringAsync(timeout.Token));
        Assert.Equal("yes", Assert.Single(message.TrailingHeaders.GetValues("x-dyn")));
    }

    [Fact]
    public async Task EncoderStream_CapacityAboveAdvertised_ClosesWithQpackEncoderStreamError()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // Set Dynamic Table Capacity 5000 > the 4096 we advertise; the (blocked) response can never complete.
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_dynamicOk, encoderStream: _ => ([0x3f, 0xe9, 0x26], 0));
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token));
        Assert.Equal(0x201L, await server.FirstCloseCode.Task.WaitAsync(timeout.Token)); // QPACK_ENCODER_STREAM_ERROR
    }

    [Fact]
    public async Task FieldSection_ReferenceWithoutInserts_ClosesWithQpackDecompressionFailed()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // HEADERS with Required Insert Count 0 but an indexed dynamic field line (0x80).
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => [0x01, 0x03, 0x00, 0x00, 0x80]);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out _);
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token));
        Assert.Equal(0x200, Assert.IsType<HttpProtocolException>(e.InnerException).ErrorCode);
        Assert.Equal(0x200L, await server.FirstCloseCode.Task.WaitAsync(timeout.Token)); // QPACK_DECOMPRESSION_FAILED
    }

    [Fact]
    public async Task BlockedStreamsAboveLimit_ClosesWithQpackDecompressionFailed()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // The inserts never come; with a blocked-stream limit of 0 the first blocked section is a connection error.
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_dynamicOk);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
        handler.QpackBlockedStreams = 0;
        HttpRequestException e = await Assert.ThrowsAsync<HttpRequestException>(() => client.GetAsync(new Uri($"https://127.0.0.1:{server.Port}/"), timeout.Token));
        Assert.Equal(0x200, Assert.IsType<HttpProtocolException>(e.InnerException).ErrorCode);
        Assert.Equal(0x200L, await server.FirstCloseCode.Task.WaitAsync(timeout.Token));
    }

    /// <summary>Content that records whether (and when) it was asked to write itself.</summary>
    internal sealed class TrackingContent(byte[] body) : HttpContent
    {
        public long SerializedAtTicks { get; private set; } = -1;

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
        {
            SerializedAtTicks = Environment.TickCount64;
            await stream.WriteAsync(body);
        }

        protected override bool TryComputeLength(out long length)
        {
            length = body.Length;
            return true;
        }
    }

    [Fact]
    public async Task Expect100Continue_NoInterimResponse_BodySentAfterTheTimeout()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        // The scripted server never sends 100 and answers only after the whole request (FIN) arrived.
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_ok);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
        handler.Expect100ContinueTimeout = TimeSpan.FromMilliseconds(400);
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        Assert.Equal("hi", await client.GetStringAsync(uri, timeout.Token)); // connection up first

        using var content = new TrackingContent([1, 2, 3]);
        using var request = new HttpRequestMessage(HttpMethod.Post, uri) { Content = content, Version = HttpVersion.Version30, VersionPolicy = HttpVersionPolicy.RequestVersionExact };
        request.Headers.ExpectContinue = true;
        long start = Environment.TickCount64;
        using HttpResponseMessage response = await client.SendAsync(request, timeout.Token);
        Assert.Equal("hi", await response.Content.ReadAsStringAsync(timeout.Token));
        Assert.True(content.SerializedAtTicks - start >= 350, $"body sent {content.SerializedAtTicks - start} ms after the headers");
    }

    [Fact]
    public async Task EnableMultipleHttp3ConnectionsOff_RequestsBeyondMaxStreamsWaitOnTheOneConnection()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_ok, maxRequestStreams: 2, responseGate: gate.Task);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        Task<string>[] requests = Enumerable.Range(0, 3).Select(_ => client.GetStringAsync(uri, timeout.Token)).ToArray();
        while (server.RequestStreams < 2)
        {
            await Task.Delay(20, timeout.Token);
        }

        await Task.Delay(500, timeout.Token);
        Assert.Equal(2, server.RequestStreams); // the third waits for MAX_STREAMS
        Assert.Equal(1, server.Connections);
        gate.SetResult();
        Assert.All(await Task.WhenAll(requests), body => Assert.Equal("hi", body));
        Assert.Equal(1, server.Connections);
        Assert.Equal(3, server.RequestStreams);
    }

    [Fact]
    public async Task EnableMultipleHttp3ConnectionsOn_RequestBeyondMaxStreamsOpensASecondConnection()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using ScriptedServer server = await ScriptedServer.StartAsync(_ => s_ok, maxRequestStreams: 2, responseGate: gate.Task);
        using HttpClient client = HandlerAgainstKestrelTests.Client(out QuicManagedHttpHandler handler);
        handler.EnableMultipleHttp3Connections = true;
        var uri = new Uri($"https://127.0.0.1:{server.Port}/");
        Task<string> first = client.GetStringAsync(uri, timeout.Token);
        while (server.RequestStreams < 1)
        {
            await Task.Delay(20, timeout.Token); // the first connection is up and holds one of its two streams
        }

        Task<string>[] more = Enumerable.Range(0, 2).Select(_ => client.GetStringAsync(uri, timeout.Token)).ToArray();
        while (server.RequestStreams < 3)
        {
            await Task.Delay(20, timeout.Token); // all three are in flight at once: no request waited
        }

        Assert.Equal(2, server.Connections);
        Assert.Equal(2, handler.PooledConnectionCount(uri));
        gate.SetResult();
        Assert.Equal("hi", await first);
        Assert.All(await Task.WhenAll(more), body => Assert.Equal("hi", body));
    }
}
