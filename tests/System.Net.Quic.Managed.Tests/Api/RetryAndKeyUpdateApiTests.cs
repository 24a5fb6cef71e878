using System.Security.Cryptography;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// The two extensions the interop cases "retry" (our server) and "keyupdate" (our client) need, through the public API
/// on loopback: <see cref="QuicListenerOptions.RequireRetry"/> and <see cref="QuicConnection.UpdateKeysAsync"/>.
/// </summary>
public class RetryAndKeyUpdateApiTests
{
    private static CancellationToken Timeout(int seconds = 20) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    private static async Task<QuicListener> ListenAsync(bool requireRetry)
    {
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.RequireRetry = requireRetry;
        return await QuicListener.ListenAsync(options, QuicProvider.Managed, CancellationToken.None);
    }

    /// <summary>Writes <paramref name="size"/> random bytes on a new bidirectional stream; the peer echoes them back.</summary>
    private static async Task EchoAsync(QuicConnection from, QuicConnection to, int size, CancellationToken ct)
    {
        byte[] payload = RandomNumberGenerator.GetBytes(size);
        Task echo = Task.Run(async () =>
        {
            await using QuicStream s = await to.AcceptInboundStreamAsync(ct);
            byte[] request = await ReadToEndAsync(s, ct);
            await s.WriteAsync(request, completeWrites: true, ct);
            await s.WritesClosed.WaitAsync(ct);
        }, ct);
        await using QuicStream stream = await from.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        Task<byte[]> response = ReadToEndAsync(stream, ct);
        await stream.WriteAsync(payload, completeWrites: true, ct);
        Assert.Equal(payload, await response);
        await echo;
    }

    /// <summary>Calls UpdateKeysAsync until RFC 9001 §6 lets it start an update (handshake confirmed, current phase acknowledged).</summary>
    private static async Task<int> UpdateKeysWhenAllowedAsync(QuicConnection connection, CancellationToken ct)
    {
        int refusals = 0;
        while (!await connection.UpdateKeysAsync(ct))
        {
            refusals++;
            await Task.Delay(5, ct);
        }
        return refusals;
    }

    /// <summary>
    /// RFC 9000 §8.1.2: a RequireRetry listener answers the first Initial with a Retry; the client repeats its Initial with
    /// the token and the connection works. Both ends report the Retry; a listener without the option sends none.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task RequireRetryValidatesEveryNewClientWithARetry(bool requireRetry)
    {
        await using QuicListener listener = await ListenAsync(requireRetry);
        System.Net.Quic.Managed.Core.Endpoint endpoint = ((ManagedListener)listener.Impl).Host.Endpoint;
        for (int i = 0; i < 2; i++)
        {
            var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
            await using (client)
            await using (server)
            {
                await EchoAsync(client, server, 50_000, Timeout());
                Assert.Equal(requireRetry, client.GetStatistics().Retried);
                Assert.Equal(requireRetry, server.GetStatistics().Retried);
            }
        }
        // Each new connection (fresh client, no NEW_TOKEN token) was retried exactly once.
        Assert.Equal(requireRetry ? 2 : 0, endpoint.RetriesSent);
    }

    /// <summary>
    /// RFC 9001 §6: a client-initiated key update through the public API, then data both ways under the new keys; the
    /// server answered it (it counts the update too), and a second update is allowed once the first was acknowledged.
    /// </summary>
    [Fact]
    public async Task ClientKeyUpdateThenDataFlowsBothWays()
    {
        await using QuicListener listener = await ListenAsync(requireRetry: false);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            CancellationToken ct = Timeout();
            Assert.Equal(0, client.GetStatistics().KeyUpdates);
            // Data first: an acknowledged 1-RTT packet of the current phase is a precondition (§6.1).
            await EchoAsync(client, server, 10_000, ct);
            await UpdateKeysWhenAllowedAsync(client, ct);
            Assert.Equal(1, client.GetStatistics().KeyUpdates);

            await EchoAsync(client, server, 300_000, ct);
            await EchoAsync(server, client, 300_000, ct);
            Assert.Equal(1, server.GetStatistics().KeyUpdates); // it saw the new phase and answered (§6.2)

            // The first update is acknowledged by now: a second one is allowed and works the same way.
            await UpdateKeysWhenAllowedAsync(client, ct);
            await EchoAsync(client, server, 100_000, ct);
            Assert.Equal(2, client.GetStatistics().KeyUpdates);
            Assert.Equal(2, server.GetStatistics().KeyUpdates);
        }
    }

    /// <summary>The server side can start an update too; the client answers it.</summary>
    [Fact]
    public async Task ServerKeyUpdateIsAnsweredByTheClient()
    {
        await using QuicListener listener = await ListenAsync(requireRetry: false);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            CancellationToken ct = Timeout();
            await EchoAsync(server, client, 10_000, ct);
            await UpdateKeysWhenAllowedAsync(server, ct);
            await EchoAsync(server, client, 200_000, ct);
            Assert.Equal(1, server.GetStatistics().KeyUpdates);
            Assert.Equal(1, client.GetStatistics().KeyUpdates);
        }
    }

    /// <summary>A connection that ended reports why instead of pretending the update can wait.</summary>
    [Fact]
    public async Task UpdateKeysAfterCloseThrows()
    {
        await using QuicListener listener = await ListenAsync(requireRetry: false);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (server)
        {
            await client.CloseAsync(7);
            await Assert.ThrowsAsync<QuicException>(async () => await client.UpdateKeysAsync(Timeout()));
            await client.DisposeAsync();
            await Assert.ThrowsAsync<ObjectDisposedException>(async () => await client.UpdateKeysAsync(Timeout()));
        }
    }

    /// <summary>System.Net.Quic (msquic) has no per-listener Retry setting: the option is refused, not silently ignored.</summary>
    [SkippableFact]
    public async Task RequireRetryIsRefusedByTheMsQuicProvider()
    {
        Skip.IfNot(QuicProviderSelection.IsSupported(QuicProvider.MsQuic), MsQuicSkipReason);
        QuicListenerOptions options = ListenerOptions(IPAddress.Loopback);
        options.RequireRetry = true;
        Assert.Throws<PlatformNotSupportedException>(() => { _ = QuicListener.ListenAsync(options, QuicProvider.MsQuic, CancellationToken.None); });
        await Task.CompletedTask;
    }
}
