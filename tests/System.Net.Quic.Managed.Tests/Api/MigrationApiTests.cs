using System.Net.Sockets;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The server's preferred address (RFC 9000 §9.6, <see cref="QuicListenerOptions.PreferredAddress"/>) and active client
/// migration (<see cref="QuicConnection.MigrateAsync"/>) on loopback. msquic implements neither in System.Net.Quic: its
/// provider refuses both with <see cref="PlatformNotSupportedException"/>.
/// </summary>
public class MigrationApiTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static int FreeUdpPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    private static byte[] Payload(int length)
    {
        byte[] data = new byte[length];
        for (int i = 0; i < data.Length; i++) data[i] = (byte)(i * 7 + (i >> 11));
        return data;
    }

    /// <summary>The server writes <paramref name="data"/> on the client's stream; <paramref name="whileReading"/> runs once a third has arrived.</summary>
    private static async Task<byte[]> DownloadAsync(QuicConnection client, QuicConnection server, byte[] data, Func<Task>? whileReading, CancellationToken ct)
    {
        await using QuicStream request = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await request.WriteAsync(new byte[] { 1 }, completeWrites: true, ct);
        Task serve = Task.Run(async () =>
        {
            await using QuicStream s = await server.AcceptInboundStreamAsync(ct);
            await ReadToEndAsync(s, ct);
            await s.WriteAsync(data, completeWrites: true, ct);
        }, ct);
        var received = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        bool triggered = whileReading is null;
        int n;
        while ((n = await request.ReadAsync(buffer, ct)) > 0)
        {
            received.Write(buffer, 0, n);
            if (!triggered && received.Length > data.Length / 3)
            {
                triggered = true;
                await whileReading!();
            }
        }
        await serve;
        return received.ToArray();
    }

    [Fact]
    public async Task ClientMovesToTheListenersPreferredAddress()
    {
        var preferred = new IPEndPoint(IPAddress.Loopback, FreeUdpPort());
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        listenerOptions.PreferredAddress = preferred;
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            // The move may already have happened: on loopback the handshake is confirmed within a millisecond.
            Assert.Contains(client.RemoteEndPoint, new[] { listener.LocalEndPoint, preferred });
            byte[] data = Payload(4 << 20);
            byte[] received = await DownloadAsync(client, server, data, null, timeout.Token);
            Assert.Equal(data.Length, received.Length);
            Assert.True(data.AsSpan().SequenceEqual(received), "the download is not byte-exact");
            while (!client.RemoteEndPoint.Equals(preferred)) await Task.Delay(20, timeout.Token);
            Assert.Equal(preferred, client.RemoteEndPoint);
            // Still usable on the new path.
            byte[] again = await DownloadAsync(client, server, Payload(100_000), null, timeout.Token);
            Assert.Equal(100_000, again.Length);
        }
    }

    [Fact]
    public async Task ClientThatDisablesPreferredAddressMigrationStays()
    {
        var preferred = new IPEndPoint(IPAddress.Loopback, FreeUdpPort());
        QuicListenerOptions listenerOptions = ListenerOptions(IPAddress.Loopback);
        listenerOptions.PreferredAddress = preferred;
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed);
        QuicClientConnectionOptions options = ClientOptions(listener.LocalEndPoint);
        options.DisablePreferredAddressMigration = true;
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener, options);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            byte[] data = Payload(1 << 20);
            byte[] received = await DownloadAsync(client, server, data, null, timeout.Token);
            Assert.True(data.AsSpan().SequenceEqual(received));
            Assert.Equal(listener.LocalEndPoint, client.RemoteEndPoint);
        }
    }

    [Fact]
    public async Task MigrateAsyncMidTransferIsByteExact()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            IPEndPoint before = client.LocalEndPoint;
            byte[] data = Payload(6 << 20);
            byte[] received = await DownloadAsync(client, server, data, async () =>
            {
                await client.MigrateAsync(new IPEndPoint(IPAddress.Loopback, 0), ct);
            }, ct);
            Assert.True(data.AsSpan().SequenceEqual(received), "the download is not byte-exact");
            Assert.NotEqual(before, client.LocalEndPoint);
            Assert.Equal(IPAddress.Loopback, client.LocalEndPoint.Address);
            // The server follows the client to its new address.
            while (!server.RemoteEndPoint.Equals(client.LocalEndPoint)) await Task.Delay(20, ct);
            // Twice: the second migration leaves (and closes) the first migration's socket.
            await client.MigrateAsync(cancellationToken: ct);
            byte[] again = await DownloadAsync(client, server, Payload(200_000), null, ct);
            Assert.Equal(200_000, again.Length);
        });
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task MigrateAsyncOnAServerOrOnMsQuicIsRefused(string provider)
    {
        await WithConnectedPairAsync(provider, async (client, server, ct) =>
        {
            if (provider == "msquic")
            {
                await Assert.ThrowsAsync<PlatformNotSupportedException>(async () => await client.MigrateAsync(cancellationToken: ct));
                return;
            }
            await Assert.ThrowsAsync<InvalidOperationException>(async () => await server.MigrateAsync(cancellationToken: ct));
            await Assert.ThrowsAsync<ArgumentException>(async () => await client.MigrateAsync(new IPEndPoint(IPAddress.IPv6Loopback, 0), ct));
        });
    }

    public static TheoryData<string, string> InvalidPreferredAddresses => new()
    {
        { "managed", "port0" }, { "managed", "wildcard" }, { "managed", "listen" }, { "managed", "family" },
        { "msquic", "port0" }, { "msquic", "wildcard" }, { "msquic", "listen" }, { "msquic", "family" },
    };

    [SkippableTheory]
    [MemberData(nameof(InvalidPreferredAddresses))]
    public async Task InvalidPreferredAddressesAreArgumentExceptions(string provider, string kind)
    {
        QuicProvider p = Require(provider);
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 4433);
        options.PreferredAddress = kind switch
        {
            "port0" => new IPEndPoint(IPAddress.Loopback, 0),
            "wildcard" => new IPEndPoint(IPAddress.Any, 4434),
            "listen" => new IPEndPoint(IPAddress.Loopback, 4433),
            _ => new IPEndPoint(IPAddress.IPv6Loopback, 4434),
        };
        var e = await Assert.ThrowsAsync<ArgumentException>(async () => await QuicListener.ListenAsync(options, p));
        Assert.Contains("PreferredAddress", e.Message);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task AValidPreferredAddressIsRefusedOnlyByMsQuic(string provider)
    {
        QuicProvider p = Require(provider);
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.PreferredAddress = new IPEndPoint(IPAddress.Loopback, FreeUdpPort());
        if (provider == "msquic")
        {
            await Assert.ThrowsAsync<PlatformNotSupportedException>(async () => await QuicListener.ListenAsync(options, p));
            return;
        }
        await using QuicListener listener = await QuicListener.ListenAsync(options, p);
        Assert.NotEqual(options.PreferredAddress, listener.LocalEndPoint);
    }
}
