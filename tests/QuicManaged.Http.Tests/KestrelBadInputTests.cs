using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;

namespace QuicManaged.Http.Tests;

/// <summary>
/// A client sending malformed HTTP/3 or QPACK to Kestrel over our transport: that connection is closed with the
/// RFC 9114 / RFC 9204 error code, and the server goes on serving other connections.
/// </summary>
public sealed class KestrelBadInputTests
{
    /// <summary>A bare QUIC connection with ALPN h3 to a local server on <paramref name="port"/> (the test writes the HTTP/3 itself).</summary>
    internal static async Task<QuicConnection> ConnectRawAsync(int port, CancellationToken cancellationToken)
        => await QuicConnection.ConnectAsync(new QuicClientConnectionOptions
        {
            RemoteEndPoint = new IPEndPoint(IPAddress.Loopback, port),
            ClientAuthenticationOptions = new SslClientAuthenticationOptions
            {
                ApplicationProtocols = [SslApplicationProtocol.Http3],
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            },
            DefaultStreamErrorCode = 0x10c,
            DefaultCloseErrorCode = 0x100,
            MaxInboundUnidirectionalStreams = 10,
        }, QuicProvider.Managed, cancellationToken);

    /// <summary>Waits for the server to close the connection; returns its application error code.</summary>
    private static async Task<long?> ServerCloseCodeAsync(QuicConnection connection, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                await using QuicStream stream = await connection.AcceptInboundStreamAsync(cancellationToken);
            }
        }
        catch (QuicException ex) when (ex.QuicError == QuicError.ConnectionAborted)
        {
            return ex.ApplicationErrorCode;
        }
    }

    // Each case: the bytes, whether they go on a request stream (after a valid control stream) or as the control stream,
    // the code expected, and whether it closes the connection (else it resets the request stream). Kestrel's HTTP/3 layer
    // (the same over msquic) decides the codes; where it departs from the RFC the comment says so.
    public static TheoryData<string, byte[], bool, long, bool> BadInputs => new()
    {
        // RFC 9114 §7.2.4.1: HTTP/2 setting identifiers in SETTINGS are H3_SETTINGS_ERROR.
        { "HTTP/2 setting in SETTINGS", [0x00, 0x04, 0x02, 0x02, 0x00], false, 0x109, true },
        // RFC 9114 §7.2.4: SETTINGS on a request stream is H3_FRAME_UNEXPECTED.
        { "SETTINGS on a request stream", [0x04, 0x00], true, 0x105, true },
        // RFC 9114 §6.2.1 asks for H3_MISSING_SETTINGS when the control stream starts with another frame; Kestrel answers a
        // DATA frame there with H3_FRAME_UNEXPECTED (also an RFC 9114 §7.2.1 code for DATA on a control stream).
        { "control stream starts with DATA", [0x00, 0x00, 0x01, 0xAA], false, 0x105, true },
        // RFC 9204 §2.2.3 asks for a QPACK_DECOMPRESSION_FAILED connection error for a field section referencing a dynamic
        // table the server never offered (Required Insert Count 1, capacity 0); Kestrel resets the request stream with
        // H3_INTERNAL_ERROR and keeps the connection.
        { "HEADERS referencing a dynamic table of capacity 0", [0x01, 0x03, 0x02, 0x00, 0x80], true, 0x102, false },
    };

    [Theory]
    [MemberData(nameof(BadInputs))]
    public async Task MalformedInput_ClosesThatConnectionOrStreamWithItsCode_OthersStillServed(string what, byte[] bytes, bool onRequestStream, long expected, bool connectionError)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using SampleServer server = await SampleServer.StartAsync();
        using HttpClient good = HandlerAgainstKestrelTests.Client(out _);
        Assert.Equal("hello over HTTP/3", await good.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));

        await using QuicConnection bad = await ConnectRawAsync(server.Port, timeout.Token);
        Task<long?> closed = ServerCloseCodeAsync(bad, timeout.Token);
        await using QuicStream control = await bad.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, timeout.Token);
        if (onRequestStream)
        {
            await control.WriteAsync(new byte[] { 0x00, 0x04, 0x00 }, timeout.Token); // a valid control stream: empty SETTINGS
            await using QuicStream request = await bad.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await request.WriteAsync(bytes, completeWrites: true, timeout.Token);
            if (!connectionError)
            {
                QuicException reset = await Assert.ThrowsAsync<QuicException>(async () => _ = await request.ReadAsync(new byte[64], timeout.Token));
                Assert.Equal(QuicError.StreamAborted, reset.QuicError);
                Assert.Equal(expected, reset.ApplicationErrorCode);
            }
        }
        else
        {
            await control.WriteAsync(bytes, timeout.Token);
        }

        if (connectionError)
        {
            Assert.Equal(expected, await closed);
        }

        // The server keeps serving: the existing connection and a new one.
        Assert.Equal("hello over HTTP/3", await good.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
        using HttpClient another = HandlerAgainstKestrelTests.Client(out _);
        Assert.Equal("hello over HTTP/3", await another.GetStringAsync(new Uri(server.BaseUri, "/hello"), timeout.Token));
        Assert.False(string.IsNullOrEmpty(what));
    }
}
