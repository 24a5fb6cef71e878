using System.Collections.Concurrent;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>What the API layer relies on from the driver: the step hook, fault isolation, waking a connected socket, ICMP errors.</summary>
public class UdpDriverHookTests
{
    /// <summary>Records datagrams; sends what is queued; optionally claims a timer that is always due.</summary>
    private sealed class RecordingEndpoint : IDatagramEndpoint
    {
        private readonly ConcurrentQueue<(byte[] Data, NetworkAddress To)> _pending = new();
        public readonly ConcurrentQueue<byte[]> Received = new();
        public bool AlwaysDue;
        public int Timeouts;

        public void Enqueue(byte[] data, IPEndPoint to) => _pending.Enqueue((data, NetworkAddress.FromEndPoint(to)));

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs) => Received.Enqueue(datagram.ToArray());

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            if (!_pending.TryDequeue(out var next)) { datagram = default; return false; }
            next.Data.CopyTo(buffer);
            datagram = new OutgoingDatagram(next.Data.Length, next.To, next.Data.Length);
            return true;
        }

        public long NextTimeoutUs => AlwaysDue ? 0 : long.MaxValue;

        public void OnTimeout(long nowUs) => Timeouts++;
    }

    private sealed class WorkItem(Action action) : IDriverWorkItem
    {
        public void Execute(long nowUs) => action();
    }

    /// <summary>Counts how it ended: run by the driver, or abandoned because the driver had stopped.</summary>
    private sealed class CountingWorkItem : IDriverWorkItem
    {
        public int Executed;
        public int Abandoned;

        public void Execute(long nowUs) => Interlocked.Increment(ref Executed);

        public void Abandon() => Interlocked.Increment(ref Abandoned);
    }

    /// <summary>
    /// Work posted to a driver that stopped (its connection's socket was released) is abandoned, exactly once, instead of
    /// sitting in the queue: the API completes the waiting read, write or close with the connection's end.
    /// </summary>
    [Fact]
    public void WorkPostedToAStoppedDriverIsAbandonedNotLeftWaiting()
    {
        var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new RecordingEndpoint());
        driver.Start();
        var before = new CountingWorkItem();
        driver.Post(before);
        driver.Dispose();
        var after = new CountingWorkItem();
        driver.Post(after);
        Assert.Equal(1, before.Executed + before.Abandoned); // run by the loop, or abandoned if the loop stopped first
        Assert.Equal(0, after.Executed);
        Assert.Equal(1, after.Abandoned);
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

    [Fact]
    public async Task StepCompletedRunsOnTheDriverThreadAfterPostedWorkAndItsSendsGoOut()
    {
        var sink = new RecordingEndpoint();
        using var receiver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), sink);
        receiver.Start();
        var endpoint = new RecordingEndpoint();
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), endpoint);
        int steps = 0;
        bool onDriver = true;
        bool workRan = false;
        bool hookSawWork = false;
        driver.StepCompleted = () =>
        {
            steps++;
            onDriver &= driver.IsDriverThread;
            if (workRan && !hookSawWork)
            {
                hookSawWork = true;
                endpoint.Enqueue(new byte[] { 42 }, receiver.LocalEndPoint); // queued by the hook: flushed right after it
            }
        };
        driver.Start();
        driver.Post(new WorkItem(() => workRan = true));
        await WaitFor(() => sink.Received.Count == 1);
        Assert.True(hookSawWork);
        Assert.True(onDriver);
        Assert.True(steps >= 1);
        Assert.Equal(42, sink.Received.Single()[0]);
    }

    [Fact]
    public async Task AFailingWorkItemIsReportedAndTheDriverKeepsRunning()
    {
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new RecordingEndpoint());
        Exception? reported = null;
        driver.UnhandledException = e => reported = e;
        driver.Start();
        driver.Post(new WorkItem(() => throw new InvalidOperationException("boom")));
        bool after = false;
        driver.Post(new WorkItem(() => after = true));
        await WaitFor(() => after);
        Assert.Equal(1, driver.UnhandledCount);
        Assert.Equal("boom", reported?.Message);
    }

    /// <summary>An endpoint that throws on its first datagram and on its first timer, as a core bug would.</summary>
    private sealed class FaultyEndpoint : IDatagramEndpoint
    {
        public readonly ConcurrentQueue<byte[]> Received = new();
        private int _receives;
        private int _timeouts;

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs)
        {
            if (Interlocked.Increment(ref _receives) == 1) throw new InvalidOperationException("core bug on input");
            Received.Enqueue(datagram.ToArray());
        }

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            datagram = default;
            return false;
        }

        public long NextTimeoutUs => Volatile.Read(ref _timeouts) == 0 ? 0 : long.MaxValue;

        public void OnTimeout(long nowUs)
        {
            if (Interlocked.Increment(ref _timeouts) == 1) throw new InvalidOperationException("core bug on a timer");
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AnExceptionFromTheCoreIsReportedAndTheDriverKeepsReceiving(bool batching)
    {
        var endpoint = new FaultyEndpoint();
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), endpoint, enableBatching: batching);
        var reported = new ConcurrentQueue<string>();
        driver.UnhandledException = e => reported.Enqueue(e.Message);
        driver.Start();
        using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        sender.SendTo(new byte[] { 1 }, driver.LocalEndPoint);
        await WaitFor(() => reported.Count >= 2);
        sender.SendTo(new byte[] { 2 }, driver.LocalEndPoint);
        await WaitFor(() => endpoint.Received.Count == 1);
        Assert.Equal(2, endpoint.Received.Single()[0]);
        Assert.Contains("core bug on input", reported);
        Assert.Contains("core bug on a timer", reported);
        Assert.True(driver.IsRunning);
    }

    [Theory]
    [InlineData(true)] // Linux: poll(2) on both sockets
    [InlineData(false)] // portable: Socket.Select
    public async Task AConnectedSocketStillWakesForPostedWork(bool batching)
    {
        // A connected UDP socket drops datagrams from other sources, the self-addressed wake-up included.
        using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        peer.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        Socket socket = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Connect(peer.LocalEndPoint!);
        var endpoint = new RecordingEndpoint();
        using var driver = new UdpDriver(socket, endpoint, enableBatching: batching);
        driver.Start();
        await Task.Delay(50); // let the thread block in its wait (no timers: it would sleep forever without a wake)
        for (int i = 0; i < 20; i++)
        {
            bool ran = false;
            driver.Post(new WorkItem(() => ran = true));
            await WaitFor(() => ran, 2000);
        }
        // And it still receives from the connected peer.
        peer.SendTo(new byte[] { 7 }, socket.LocalEndPoint!);
        await WaitFor(() => endpoint.Received.Count == 1);
    }

    [SkippableTheory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AConnectedSocketReportsThePortUnreachableAsConnectionRefused(bool batching)
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "ICMP errors on connected UDP sockets are checked on Linux");
        int closedPort;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closedPort = ((IPEndPoint)probe.LocalEndPoint!).Port;
        }
        var target = new IPEndPoint(IPAddress.Loopback, closedPort);
        Socket socket = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Connect(target);
        var endpoint = new RecordingEndpoint();
        using var driver = new UdpDriver(socket, endpoint, enableBatching: batching);
        var errors = new ConcurrentQueue<SocketError>();
        driver.SocketErrorHandler = errors.Enqueue;
        driver.Start();
        driver.Post(new WorkItem(() => endpoint.Enqueue(new byte[1200], target)));
        await WaitFor(() => !errors.IsEmpty);
        Assert.Equal(SocketError.ConnectionRefused, errors.First());
    }

    [Fact]
    public async Task ATimerThatIsAlwaysDueDoesNotStarveTheSocket()
    {
        var busy = new RecordingEndpoint { AlwaysDue = true };
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), busy);
        driver.Start();
        using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        for (int i = 0; i < 10; i++) sender.SendTo(new byte[] { (byte)i }, driver.LocalEndPoint);
        await WaitFor(() => busy.Received.Count == 10);
        Assert.True(driver.ZeroWaitSteps > 0);
        Assert.True(busy.Timeouts > 0);
    }
}
