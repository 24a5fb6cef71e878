using System.Security.Cryptography;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The DATAGRAM extension (RFC 9221) through the public API: on loopback with the managed provider, and what each
/// provider does when datagrams are not negotiated or not available (msquic: NotSupportedException, System.Net.Quic in
/// .NET 10 has no datagram API).
/// </summary>
public class DatagramApiTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static void EnableDatagrams(QuicConnectionOptions o) => o.MaxDatagramFrameSize = 65535;

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task WithoutNegotiationDatagramCallsFailClearly(string provider)
    {
        await WithConnectedPairAsync(provider, async (client, server, ct) =>
        {
            if (provider == "msquic")
            {
                Assert.Throws<NotSupportedException>(() => client.MaxDatagramSize);
                await Assert.ThrowsAsync<NotSupportedException>(async () => await client.SendDatagramAsync(new byte[1], ct));
                await Assert.ThrowsAsync<NotSupportedException>(async () => await server.ReceiveDatagramAsync(ct));
                return;
            }
            // Nobody advertised max_datagram_frame_size: nothing may be sent, nothing can be received.
            Assert.Equal(0, client.MaxDatagramSize);
            Assert.Equal(0, server.MaxDatagramSize);
            var send = await Assert.ThrowsAsync<InvalidOperationException>(async () => await client.SendDatagramAsync(new byte[1], ct));
            Assert.Contains("max_datagram_frame_size", send.Message);
            var receive = await Assert.ThrowsAsync<InvalidOperationException>(async () => await server.ReceiveDatagramAsync(ct));
            Assert.Contains("MaxDatagramFrameSize", receive.Message);
        });
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task EnablingDatagramsIsRefusedOnlyWhereUnsupported(string provider)
    {
        QuicProvider kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        EnableDatagrams(options);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        if (provider == "msquic")
        {
            var e = await Assert.ThrowsAsync<NotSupportedException>(async () => await QuicConnection.ConnectAsync(options, kind, timeout.Token));
            Assert.Contains("managed provider", e.Message);
            return;
        }
        var (client, server) = await ConnectPairAsync(kind, listener, options);
        await using (client)
        await using (server)
        {
            // Only the client advertised: the server may send to it, the client may not send to the server.
            Assert.Equal(0, client.MaxDatagramSize);
            Assert.True(server.MaxDatagramSize > 1000, server.MaxDatagramSize.ToString());
            Assert.Equal(QuicDatagramSendResult.Acknowledged, await server.SendDatagramAsync("hi"u8.ToArray(), timeout.Token));
            Assert.Equal("hi"u8.ToArray(), (await client.ReceiveDatagramAsync(timeout.Token)).ToArray());
        }
    }

    [Fact]
    public async Task DatagramsEchoAlongsideAStream()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            int max = client.MaxDatagramSize;
            // 1350-byte UDP payloads minus the worst-case header, tag and frame header.
            Assert.InRange(max, 1200, 1350);
            Assert.Equal(max, server.MaxDatagramSize);

            // The server echoes every datagram and, on a stream, the stream's bytes.
            Task echo = Task.Run(async () =>
            {
                await using QuicStream s = await server.AcceptInboundStreamAsync(ct);
                Task streamEcho = Task.Run(async () =>
                {
                    byte[] request = await ReadToEndAsync(s, ct);
                    await s.WriteAsync(request, completeWrites: true, ct);
                }, ct);
                for (int i = 0; i < 20; i++)
                {
                    ReadOnlyMemory<byte> d = await server.ReceiveDatagramAsync(ct);
                    Assert.Equal(QuicDatagramSendResult.Acknowledged, await server.SendDatagramAsync(d, ct));
                }
                await streamEcho;
            }, ct);

            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            byte[] bulk = RandomNumberGenerator.GetBytes(256 * 1024);
            Task<byte[]> streamBack = ReadToEndAsync(stream, ct);
            Task write = stream.WriteAsync(bulk, completeWrites: true, ct).AsTask();

            var sends = new List<Task<QuicDatagramSendResult>>();
            var expected = new HashSet<string>();
            for (int i = 0; i < 20; i++)
            {
                byte[] payload = RandomNumberGenerator.GetBytes(i == 0 ? max : 1 + i * 50);
                expected.Add(Convert.ToHexString(payload));
                sends.Add(client.SendDatagramAsync(payload, ct).AsTask());
            }
            var echoed = new HashSet<string>();
            for (int i = 0; i < 20; i++) echoed.Add(Convert.ToHexString((await client.ReceiveDatagramAsync(ct)).Span));
            Assert.Equal(expected, echoed);
            Assert.All(await Task.WhenAll(sends), r => Assert.Equal(QuicDatagramSendResult.Acknowledged, r));
            await write;
            Assert.Equal(bulk, await streamBack);
            await echo;

            QuicConnectionStatistics stats = client.GetStatistics();
            Assert.Equal(20, stats.DatagramFramesSent);
            Assert.Equal(20, stats.DatagramFramesAcknowledged);
            Assert.Equal(20, stats.DatagramFramesReceived);
            Assert.Equal(0, stats.DatagramFramesLost);
        }, EnableDatagrams, EnableDatagrams);
    }

    [Fact]
    public async Task TooLargeDatagramIsAnArgumentException()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            int max = client.MaxDatagramSize;
            var e = await Assert.ThrowsAsync<ArgumentException>(async () => await client.SendDatagramAsync(new byte[max + 1], ct));
            Assert.Equal("datagram", e.ParamName);
            Assert.Contains(max.ToString(), e.Message);
            // An empty datagram is allowed (RFC 9221 §4 puts no lower bound on the payload).
            Assert.Equal(QuicDatagramSendResult.Acknowledged, await client.SendDatagramAsync(ReadOnlyMemory<byte>.Empty, ct));
            Assert.Equal(0, (await server.ReceiveDatagramAsync(ct)).Length);
        }, EnableDatagrams, EnableDatagrams);
    }

    [Fact]
    public async Task PendingReceiveFailsWhenThePeerCloses()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            ValueTask<ReadOnlyMemory<byte>> pending = server.ReceiveDatagramAsync(ct);
            await client.CloseAsync(42, ct);
            var e = await Assert.ThrowsAsync<QuicException>(async () => await pending);
            Assert.Equal(QuicError.ConnectionAborted, e.QuicError);
            Assert.Equal(42, e.ApplicationErrorCode);
            await Assert.ThrowsAsync<QuicException>(async () => await client.SendDatagramAsync(new byte[1], ct));
        }, EnableDatagrams, EnableDatagrams);
    }

    [Theory]
    [InlineData(-1, 128)]
    [InlineData(65536, 128)]
    [InlineData(1200, 0)]
    [InlineData(1200, 65537)]
    public void DatagramOptionsAreValidated(int maxFrameSize, int receiveCapacity)
    {
        QuicClientConnectionOptions o = ClientOptions(new IPEndPoint(IPAddress.Loopback, 4433));
        o.MaxDatagramFrameSize = maxFrameSize;
        o.DatagramReceiveQueueCapacity = receiveCapacity;
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => o.Validate("options"));
        Assert.Equal("options", e.ParamName);
        Assert.Contains(maxFrameSize is < 0 or > 65535 ? "MaxDatagramFrameSize" : "DatagramReceiveQueueCapacity", e.Message);

        // The same through ConnectAsync, synchronously, before any async work.
        Assert.ThrowsAny<ArgumentException>(() => QuicConnection.ConnectAsync(o, QuicProvider.Managed));

        var server = new QuicServerConnectionOptions { MaxDatagramFrameSize = maxFrameSize, DatagramReceiveQueueCapacity = receiveCapacity };
        Assert.ThrowsAny<ArgumentException>(() => server.Validate("options"));
    }

    [Fact]
    public void DatagramOptionDefaults()
    {
        var o = new QuicClientConnectionOptions();
        Assert.Equal(0, o.MaxDatagramFrameSize);
        Assert.Equal(128, o.DatagramReceiveQueueCapacity);
    }
}
