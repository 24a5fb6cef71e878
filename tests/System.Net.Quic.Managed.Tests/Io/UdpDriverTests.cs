using System.Collections.Concurrent;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Io;

public class UdpDriverTests
{
    /// <summary>Echoes every datagram back; records what it got.</summary>
    private sealed class EchoEndpoint : IDatagramEndpoint
    {
        private readonly Queue<(byte[] Data, NetworkAddress To)> _pending = new();
        public readonly ConcurrentQueue<byte[]> Received = new();

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs)
        {
            Received.Enqueue(datagram.ToArray());
            _pending.Enqueue((datagram.ToArray(), remote));
        }

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            if (!_pending.TryDequeue(out var next)) { datagram = default; return false; }
            next.Data.CopyTo(buffer);
            datagram = new OutgoingDatagram(next.Data.Length, next.To, next.Data.Length);
            return true;
        }

        public long NextTimeoutUs => long.MaxValue;

        public void OnTimeout(long nowUs) { }
    }

    /// <summary>Sends a queued run of datagrams; records replies; fires a periodic timer.</summary>
    private sealed class ProbeEndpoint : IDatagramEndpoint
    {
        private readonly Queue<(byte[] Run, int Segment, NetworkAddress To)> _pending = new();
        public readonly ConcurrentQueue<byte[]> Received = new();
        public long TimerPeriodUs = long.MaxValue;
        private long _next = long.MaxValue;
        public int TimerFired;

        public void Enqueue(byte[] run, int segment, NetworkAddress to) => _pending.Enqueue((run, segment, to));

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs) => Received.Enqueue(datagram.ToArray());

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            if (_next == long.MaxValue && TimerPeriodUs != long.MaxValue) _next = nowUs + TimerPeriodUs;
            if (!_pending.TryDequeue(out var next)) { datagram = default; return false; }
            next.Run.CopyTo(buffer);
            datagram = new OutgoingDatagram(next.Run.Length, next.To, next.Segment);
            return true;
        }

        public long NextTimeoutUs => _next;

        public void OnTimeout(long nowUs)
        {
            TimerFired++;
            _next = nowUs + TimerPeriodUs;
        }
    }

    private sealed class WorkItem(Action<long> action) : IDriverWorkItem
    {
        public void Execute(long nowUs) => action(nowUs);
    }

    private static async Task WaitFor(Func<bool> condition, int timeoutMs = 5000)
    {
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline) throw new TimeoutException("condition not met in time");
            await Task.Delay(5);
        }
    }

    private static void Post(UdpDriver driver, Action<long> action) => driver.Post(new WorkItem(action));

    [Theory]
    [InlineData("127.0.0.1", "127.0.0.1")]
    [InlineData("::1", "::1")]
    [InlineData("::", "127.0.0.1")] // dual-stack server, IPv4 client
    public async Task EchoRoundTrip(string serverBind, string clientTarget)
    {
        var echo = new EchoEndpoint();
        using var server = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Parse(serverBind), 0)), echo);
        server.Start();
        var target = new IPEndPoint(IPAddress.Parse(clientTarget), server.LocalEndPoint.Port);
        var probe = new ProbeEndpoint();
        using var client = new UdpDriver(UdpSocketFactory.Bind(UdpSocketFactory.DefaultLocalFor(target)), probe);
        client.Start();

        for (int i = 0; i < 20; i++)
        {
            byte[] payload = Enumerable.Range(0, 100 + i).Select(b => (byte)(b + i)).ToArray();
            Post(client, _ => probe.Enqueue(payload, payload.Length, NetworkAddress.FromEndPoint(target)));
        }
        await WaitFor(() => probe.Received.Count == 20);
        Assert.Equal(Enumerable.Range(0, 20).Select(i => 100 + i).Order(), probe.Received.Select(r => r.Length).Order());
        Assert.All(probe.Received, r => Assert.Equal((byte)(r.Length - 100), r[0]));
    }

    [Fact]
    public async Task SegmentedRunArrivesAsSeparateDatagrams()
    {
        var echo = new EchoEndpoint();
        using var server = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), echo);
        server.Start();
        var probe = new ProbeEndpoint();
        using var client = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), probe);
        client.Start();

        byte[] run = new byte[1200 + 1200 + 500];
        run[0] = 1; run[1200] = 2; run[2400] = 3;
        Post(client, _ => probe.Enqueue(run, 1200, NetworkAddress.FromEndPoint(server.LocalEndPoint)));
        await WaitFor(() => echo.Received.Count == 3);
        byte[][] got = echo.Received.OrderBy(d => d[0]).ToArray();
        Assert.Equal(new[] { 1200, 1200, 500 }, got.Select(d => d.Length));
        Assert.Equal(new byte[] { 1, 2, 3 }, got.Select(d => d[0]));
        // With GSO the three datagrams left in one send call; without it, three.
        Assert.Equal(client.SegmentationEnabled ? 1 : 3, client.SendCalls);
    }

    /// <summary>
    /// Regression (found by interop): the UDP_SEGMENT socket option stays set after a GSO batch, so a later single
    /// datagram longer than that segment size was split by the kernel into undecryptable pieces.
    /// </summary>
    [Fact]
    public async Task SingleDatagramAfterASegmentedBatchIsNotSplit()
    {
        var echo = new EchoEndpoint();
        using var server = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), echo);
        server.Start();
        var probe = new ProbeEndpoint();
        using var client = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), probe);
        client.Start();
        var target = NetworkAddress.FromEndPoint(server.LocalEndPoint);
        byte[] batch = new byte[3 * 700];
        batch[0] = 1; batch[700] = 2; batch[1400] = 3;
        Post(client, _ => probe.Enqueue(batch, 700, target));
        await WaitFor(() => echo.Received.Count == 3);
        byte[] single = new byte[1300];
        single[0] = 9;
        Post(client, _ => probe.Enqueue(single, single.Length, target));
        await WaitFor(() => echo.Received.Count >= 4);
        await Task.Delay(100); // a split datagram would show up as two more arrivals
        byte[][] got = echo.Received.ToArray();
        Assert.Equal(4, got.Length);
        Assert.Equal(1300, got.Single(d => d[0] == 9).Length);
    }

    [Fact]
    public async Task TimersFireAndPostedWorkRunsOnTheDriverThread()
    {
        var probe = new ProbeEndpoint { TimerPeriodUs = 10_000 };
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), probe);
        driver.Start();
        bool onDriverThread = false;
        Post(driver, _ => onDriverThread = driver.IsDriverThread);
        await WaitFor(() => probe.TimerFired >= 5);
        Assert.True(onDriverThread);
        Assert.False(driver.IsDriverThread);
    }

    [Fact]
    public void DisposeStopsTheThreadAndClosesTheSocket()
    {
        var probe = new ProbeEndpoint();
        Socket socket = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        var driver = new UdpDriver(socket, probe);
        driver.Start();
        driver.Dispose();
        driver.Dispose(); // idempotent
        Assert.Throws<ObjectDisposedException>(() => socket.Available);
    }

    [Fact]
    public void AddressCodecRoundTripsAndMapsIpv4OnDualStack()
    {
        var codec = new SocketAddressCodec(AddressFamily.InterNetworkV6);
        var v4 = NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Parse("192.0.2.1"), 443));
        SocketAddress sa = codec.ForSend(v4);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("::ffff:192.0.2.1"), 443), new IPEndPoint(IPAddress.IPv6Any, 0).Create(sa));
        Assert.Equal(v4, SocketAddressCodec.Read(sa)); // mapped addresses read back as IPv4
        var v6 = NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Parse("2001:db8::7"), 8443));
        Assert.Equal(v6, SocketAddressCodec.Read(codec.ForSend(v6)));
        Assert.Throws<SocketException>(() => new SocketAddressCodec(AddressFamily.InterNetwork).ForSend(v6));
    }
}
