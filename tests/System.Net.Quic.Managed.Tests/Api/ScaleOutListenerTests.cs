using System.Diagnostics;
using System.Net.Quic.Managed.Io;
using System.Net.Quic.Managed.Tests.Ids;
using Xunit.Abstractions;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Scale-out options of the managed listener: several SO_REUSEPORT sockets with a driver each, kernel steering
/// by the worker tag of our connection IDs, hand-over of misdelivered datagrams, QUIC-LB IDs and fleet keys. Loopback,
/// managed provider (System.Net.Quic has no such settings: the msquic provider refuses them, see the last test).
/// </summary>
[Collection(nameof(ScaleOutCollection))]
public class ScaleOutListenerTests(ITestOutputHelper output)
{
    private static QuicListenerOptions Options(Action<QuicListenerOptions> configure)
    {
        QuicListenerOptions options = QuicApiTestEnvironment.ListenerOptions(IPAddress.Loopback);
        configure(options);
        return options;
    }

    private static ListenerPort PortOf(QuicListener listener) => ((ManagedListener)listener.Impl).Port;

    private static ManagedDriverHost HostOf(QuicConnection server) => ((ManagedConnection)server.Impl).Host;

    public static TheoryData<string> InvalidOptions() => new()
    {
        "sockets -1", "sockets 257", "lb no server id", "lb rotation 7", "lb nonce 3", "lb too long", "lb key 8",
        "lb no room for tag", "reset key 8", "token key 15", "group -1", "group 257", "group index without size",
        "group index past size", "group on port 0",
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public async Task InvalidScaleOutOptionsThrowArgumentException(string which)
    {
        QuicListenerOptions options = Options(o =>
        {
            switch (which)
            {
                case "sockets -1": o.ListenerSockets = -1; break;
                case "sockets 257": o.ListenerSockets = 257; break;
                case "lb no server id": o.LoadBalancing = new QuicLoadBalancingOptions(); break;
                case "lb rotation 7": o.LoadBalancing = new QuicLoadBalancingOptions { ServerId = new byte[2], ConfigRotation = 7 }; break;
                case "lb nonce 3": o.LoadBalancing = new QuicLoadBalancingOptions { ServerId = new byte[2], NonceLength = 3 }; break;
                case "lb too long": o.LoadBalancing = new QuicLoadBalancingOptions { ServerId = new byte[10], NonceLength = 10 }; break;
                case "lb key 8": o.LoadBalancing = new QuicLoadBalancingOptions { ServerId = new byte[2], Key = new byte[8] }; break;
                case "lb no room for tag":
                    o.ListenerSockets = 2;
                    o.LoadBalancing = new QuicLoadBalancingOptions { ServerId = new byte[10], NonceLength = 9 };
                    break;
                case "reset key 8": o.StatelessResetKey = new byte[8]; break;
                case "token key 15": o.AddressValidationTokenKey = new byte[15]; break;
                case "group -1": o.ReusePortGroupSize = -1; break;
                case "group 257": o.ReusePortGroupSize = 257; break;
                case "group index without size": o.ReusePortGroupIndex = 1; break;
                case "group index past size":
                    o.ReusePortGroupSize = 2;
                    o.ReusePortGroupIndex = 2;
                    o.ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 4433);
                    break;
                case "group on port 0": o.ReusePortGroupSize = 2; break; // the processes of a group must agree on a port
            }
        });
        if (which == "lb no room for tag" && !OperatingSystem.IsLinux()) return; // one socket there: no tag, so valid
        await Assert.ThrowsAnyAsync<ArgumentException>(async () => await QuicListener.ListenAsync(options, QuicProvider.Managed, CancellationToken.None));
    }

    [SkippableFact]
    public async Task MsQuicProviderRefusesScaleOutOptions()
    {
        Skip.IfNot(QuicListener.IsProviderSupported(QuicProvider.MsQuic), QuicApiTestEnvironment.MsQuicSkipReason);
        QuicListenerOptions options = Options(o => o.StatelessResetKey = new byte[32]);
        await Assert.ThrowsAsync<PlatformNotSupportedException>(async () => await QuicListener.ListenAsync(options, QuicProvider.MsQuic, CancellationToken.None));
        options = Options(o =>
        {
            o.ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 4433);
            o.ReusePortGroupSize = 2;
        });
        await Assert.ThrowsAsync<PlatformNotSupportedException>(async () => await QuicListener.ListenAsync(options, QuicProvider.MsQuic, CancellationToken.None));
    }

    /// <summary>A stream's worth of data each way: the connection works end to end.</summary>
    private static async Task EchoAsync(QuicConnection client, QuicConnection server, int bytes, CancellationToken ct)
    {
        byte[] payload = new byte[bytes];
        new Random(bytes).NextBytes(payload);
        await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        await stream.WriteAsync(payload, completeWrites: true, ct);
        await using QuicStream accepted = await server.AcceptInboundStreamAsync(ct);
        byte[] received = await QuicApiTestEnvironment.ReadToEndAsync(accepted, ct);
        await accepted.WriteAsync(received, completeWrites: true, ct);
        byte[] echoed = await QuicApiTestEnvironment.ReadToEndAsync(stream, ct);
        Assert.Equal(payload, echoed);
    }

    [Fact]
    public async Task LoadBalancedListenerIssuesIdsTheBalancerRoutes()
    {
        byte[] serverId = [0x0b, 0xad];
        byte[] key = Enumerable.Range(1, 16).Select(i => (byte)i).ToArray();
        await using QuicListener listener = await QuicListener.ListenAsync(Options(o =>
        {
            o.LoadBalancing = new QuicLoadBalancingOptions { ConfigRotation = 2, ServerId = serverId, NonceLength = 7, Key = key };
            o.StatelessResetKey = new byte[32];
            o.AddressValidationTokenKey = new byte[32];
        }), QuicProvider.Managed);
        var (client, server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
            await EchoAsync(client, server, 10_000, timeout.Token);
            using var decoder = new QuicLbDecoder(2, serverId.Length, 7, key);
            var core = ((ManagedConnection)server.Impl).Core!;
            Assert.Equal(10, core.InitialSourceId.Length);
            Assert.Equal(serverId, decoder.DecodeServerId(core.InitialSourceId.Span));
        }
    }

    /// <summary>
    /// Many clients at once on a two-socket listener: the kernel spreads them over both workers (by address hash), every
    /// connection completes and carries data, and nothing needs handing over (the steering program finds every packet's
    /// worker). 1,000 connections opened at once must all complete too (the backlog allows them; beyond 256 handshakes
    /// in progress clients go through a Retry first). Every handshake may take the whole run's time on both ends: the
    /// 10 s default handshake timeout bounds one handshake, not a thousand started at once on two cores that other
    /// processes keep busy (each costs a signature and a chain validation: they finish in turn, not all in 10 s).
    /// </summary>
    [SkippableTheory]
    [InlineData(200, 30)]
    [InlineData(1000, 120)]
    public async Task ConnectionsOpenedAtOnceSpreadOverTwoWorkersAndAllComplete(int count, int seconds)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "SO_REUSEPORT groups are Linux only (one socket elsewhere)");
        TimeSpan handshakeTimeout = TimeSpan.FromSeconds(seconds);
        QuicListenerOptions listenerOptions = Options(o =>
        {
            o.ListenerSockets = 2;
            o.ListenBacklog = count + 10;
        });
        listenerOptions.ConnectionOptionsCallback = (_, _, _) =>
        {
            QuicServerConnectionOptions server = QuicApiTestEnvironment.ServerOptions();
            server.HandshakeTimeout = handshakeTimeout;
            return ValueTask.FromResult(server);
        };
        await using QuicListener listener = await QuicListener.ListenAsync(listenerOptions, QuicProvider.Managed);
        ListenerPort port = PortOf(listener);
        Assert.Equal(2, port.Hosts.Length);
        Assert.True(port.KernelSteering, "the reuseport program was not attached");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
        var watch = Stopwatch.StartNew();
        var perWorker = new int[2];
        var servers = new List<QuicConnection>();
        Task accept = Task.Run(async () =>
        {
            for (int i = 0; i < count; i++)
            {
                QuicConnection server = await listener.AcceptConnectionAsync(timeout.Token);
                lock (servers) servers.Add(server);
                Interlocked.Increment(ref perWorker[Array.IndexOf(port.Hosts, HostOf(server))]);
                _ = Task.Run(async () =>
                {
                    await using QuicStream stream = await server.AcceptInboundStreamAsync(timeout.Token);
                    byte[] request = await QuicApiTestEnvironment.ReadToEndAsync(stream, timeout.Token);
                    await stream.WriteAsync(request, completeWrites: true, timeout.Token);
                });
            }
        });
        var clients = new QuicConnection[count];
        await Task.WhenAll(Enumerable.Range(0, count).Select(async i =>
        {
            QuicClientConnectionOptions options = QuicApiTestEnvironment.ClientOptions(listener.LocalEndPoint);
            options.HandshakeTimeout = handshakeTimeout;
            QuicConnection client = await QuicConnection.ConnectAsync(options, QuicProvider.Managed, timeout.Token);
            clients[i] = client;
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            byte[] request = BitConverter.GetBytes(i);
            await stream.WriteAsync(request, completeWrites: true, timeout.Token);
            Assert.Equal(request, await QuicApiTestEnvironment.ReadToEndAsync(stream, timeout.Token));
        }));
        await accept;
        output.WriteLine($"{count} connections in {watch.ElapsedMilliseconds} ms; worker 0: {perWorker[0]}, worker 1: {perWorker[1]}; handed over: {port.Handoff!.HandedOff}");
        Assert.Equal(count, perWorker[0] + perWorker[1]);
        Assert.True(perWorker[0] > count / 5 && perWorker[1] > count / 5, "the kernel should spread new clients over both sockets");
        Assert.Equal(0, port.Handoff.HandedOff);
        await Task.WhenAll(clients.Concat(servers).Select(c => c.DisposeAsync().AsTask()));
    }

    /// <summary>
    /// A client whose NAT gives it new ports in the middle of a download stays with the worker that holds its connection,
    /// byte-exact: the kernel's program steers its short headers by the ID's worker tag whatever the new address hashes to,
    /// and without the program (<paramref name="steering"/> false) the worker that gets them hands them over.
    /// </summary>
    [SkippableTheory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ClientThatRebindsItsPortStaysOnItsWorker(bool steering)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "SO_REUSEPORT groups are Linux only");
        ReusePortGroup.SteeringDisabledForTests = !steering;
        QuicListener listener;
        try
        {
            listener = await QuicListener.ListenAsync(Options(o => o.ListenerSockets = 2), QuicProvider.Managed);
        }
        finally
        {
            ReusePortGroup.SteeringDisabledForTests = false;
        }
        await using (listener)
        {
            ListenerPort port = PortOf(listener);
            Assert.Equal(steering, port.KernelSteering);
            using var relay = new RebindingUdpRelay(listener.LocalEndPoint);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            var (client, server) = await QuicApiTestEnvironment.ConnectPairAsync(QuicProvider.Managed, listener, QuicApiTestEnvironment.ClientOptions(relay.EndPoint));
            await using (client)
            await using (server)
            {
                ManagedDriverHost owner = HostOf(server);
                byte[] payload = new byte[4 << 20];
                new Random(17).NextBytes(payload);
                await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, timeout.Token);
                Task send = Task.Run(async () =>
                {
                    for (int offset = 0; offset < payload.Length; offset += 256 * 1024)
                    {
                        await stream.WriteAsync(payload.AsMemory(offset, 256 * 1024), timeout.Token);
                        if (offset / (256 * 1024) % 2 == 1 && relay.Rebinds < 8) relay.Rebind();
                    }
                    stream.CompleteWrites();
                });
                await using QuicStream inbound = await server.AcceptInboundStreamAsync(timeout.Token);
                byte[] received;
                try
                {
                    received = await QuicApiTestEnvironment.ReadToEndAsync(inbound, timeout.Token);
                    await send;
                }
                finally
                {
                    foreach (ManagedDriverHost host in port.Hosts)
                    {
                        output.WriteLine($"worker: handed off {host.Endpoint.DatagramsHandedOff}, resets {host.Endpoint.StatelessResetsSent}, dropped {host.Endpoint.DatagramsDropped}");
                    }
                }
                output.WriteLine($"steering {steering}: {relay.Rebinds} rebinds, {port.Handoff!.HandedOff} datagrams handed over, server sees {server.RemoteEndPoint}");
                Assert.True(payload.AsSpan().SequenceEqual(received), "the data arrived altered");
                Assert.Equal(8, relay.Rebinds);
                Assert.Same(owner, HostOf(server));
                Assert.Equal(relay.UpstreamEndPoint, ((ManagedConnection)server.Impl).Core!.RemoteAddress.ToEndPoint()); // it followed the client
                if (steering) Assert.Equal(0, port.Handoff.HandedOff);
                else Assert.True(port.Handoff.HandedOff > 0, "with 8 new ports and no program, some datagrams should reach the other worker (1 in 256 runs may not)");
            }
        }
    }
}

/// <summary>
/// The scale-out tests open up to 1,000 connections (and their threads) at once: they run alone, so that they neither slow
/// down the timing of other tests nor disturb the thread and descriptor counts of <see cref="ResourceCountCollection"/>.
/// </summary>
[CollectionDefinition(nameof(ScaleOutCollection), DisableParallelization = true)]
public sealed class ScaleOutCollection;
