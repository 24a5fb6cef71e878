using System.Collections.Concurrent;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace System.Net.Quic.Managed.Tests.Io;

/// <summary>
/// The recvmmsg/UDP_GRO receive path and the portable Socket path deliver the same datagrams, with the right source,
/// over real loopback sockets; coalesced GSO bursts are split back; malformed control data cannot crash the parser.
/// </summary>
public class UdpReceiveBatchingTests
{
    private sealed class RecordingEndpoint : IDatagramEndpoint
    {
        public readonly ConcurrentQueue<(byte[] Data, NetworkAddress From)> Received = new();

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs) => Received.Enqueue((datagram.ToArray(), remote));

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            datagram = default;
            return false;
        }

        public long NextTimeoutUs => long.MaxValue;

        public void OnTimeout(long nowUs) { }
    }

    /// <summary>Counts datagrams and samples the driver thread's allocation counter, allocating nothing itself.</summary>
    private sealed class AllocationProbeEndpoint : IDatagramEndpoint
    {
        public int Count;
        public long AllocatedAtWarm = -1;
        public long AllocatedAtEnd = -1;
        public int WarmAt;
        public int EndAt;

        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs)
        {
            int n = Interlocked.Increment(ref Count);
            if (n == WarmAt) AllocatedAtWarm = GC.GetAllocatedBytesForCurrentThread();
            if (n == EndAt) Volatile.Write(ref AllocatedAtEnd, GC.GetAllocatedBytesForCurrentThread());
        }

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            datagram = default;
            return false;
        }

        public long NextTimeoutUs => long.MaxValue;

        public void OnTimeout(long nowUs) { }
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

    private static bool LinuxBatchingExpected => OperatingSystem.IsLinux() && !UdpReceiver.BatchingDisabledByConfiguration;

    [SkippableFact]
    public void LinuxUsesRecvmmsgWithGro()
    {
        Skip.IfNot(LinuxBatchingExpected, "recvmmsg is the Linux path (and configuration did not disable it)");
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new RecordingEndpoint());
        Assert.True(driver.BatchedReceive);
        // UDP_GRO exists since Linux 5.0; every kernel this runs on in CI has it.
        Assert.True(driver.CoalescedReceive);
        using var portable = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new RecordingEndpoint(), enableBatching: false);
        Assert.False(portable.BatchedReceive);
        Assert.False(portable.CoalescedReceive);
    }

    [SkippableFact]
    public void SocketsReceivedOnOneThreadShareItsBuffersAndEachGetsItsOwnDatagrams()
    {
        Skip.IfNot(LinuxBatchingExpected, "recvmmsg is the Linux path (and configuration did not disable it)");
        using Socket first = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using Socket second = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        RecvMmsgUdpReceiver a = RecvMmsgUdpReceiver.TryCreate(first, enableCoalescing: false)!;
        RecvMmsgUdpReceiver b = RecvMmsgUdpReceiver.TryCreate(second, enableCoalescing: false)!;
        Assert.NotNull(a);
        Assert.NotNull(b);
        for (int round = 0; round < 20; round++)
        {
            sender.SendTo(new byte[] { 1, (byte)round, 1 }, first.LocalEndPoint!);
            sender.SendTo(new byte[] { 2, (byte)round, 2, 2 }, second.LocalEndPoint!);
            Assert.Equal([1, (byte)round, 1], ReceiveOne(a));
            Assert.Equal([2, (byte)round, 2, 2], ReceiveOne(b));
        }
        // One set for the thread, whichever socket it receives on: no 128-256 KiB of pinned buffers per socket.
        Assert.Same(RecvMmsgBufferSet.ForCurrentThread(32, UdpReceiver.MaxReceivableDatagram, coalescing: false),
            RecvMmsgBufferSet.ForCurrentThread(32, UdpReceiver.MaxReceivableDatagram, coalescing: false));
        a.Release();
        Assert.Throws<ObjectDisposedException>(() => a.Receive(knownReadable: true, out _));

        static byte[] ReceiveOne(RecvMmsgUdpReceiver receiver)
        {
            for (int attempt = 0; attempt < 500; attempt++)
            {
                if (receiver.Receive(knownReadable: true, out SocketError error) > 0)
                {
                    Assert.Equal(SocketError.Success, error);
                    Assert.True(receiver.TryGetMessage(0, out Span<byte> data, out _, out _, out _));
                    return data.ToArray();
                }
                Thread.Sleep(2);
            }
            throw new Xunit.Sdk.XunitException("no datagram");
        }
    }

    [Fact]
    public void TheAppContextSwitchSelectsThePortablePath()
    {
        using Socket socket = UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        AppContext.SetSwitch(UdpReceiver.DisableBatchingSwitch, true);
        try
        {
            Assert.True(UdpReceiver.BatchingDisabledByConfiguration);
            Assert.IsType<SocketUdpReceiver>(UdpReceiver.Create(socket));
        }
        finally
        {
            AppContext.SetSwitch(UdpReceiver.DisableBatchingSwitch, false);
        }
    }

    [Theory]
    [InlineData("127.0.0.1", true)]
    [InlineData("127.0.0.1", false)]
    [InlineData("::1", true)]
    [InlineData("::1", false)]
    public async Task EveryDatagramArrivesIntactWithItsSource(string address, bool batching)
    {
        var endpoint = new RecordingEndpoint();
        var bind = new IPEndPoint(IPAddress.Parse(address), 0);
        using var driver = new UdpDriver(UdpSocketFactory.Bind(bind), endpoint, enableBatching: batching);
        driver.Start();
        using var sender = new Socket(bind.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        sender.Bind(bind);
        var senderAddress = NetworkAddress.FromEndPoint((IPEndPoint)sender.LocalEndPoint!);
        const int Count = 200; // more than one recvmmsg call and more than one receive batch
        for (int i = 0; i < Count; i++)
        {
            byte[] payload = new byte[20 + (i * 37 % 1400)];
            payload[0] = (byte)i;
            payload[^1] = (byte)(i ^ 0x5a);
            sender.SendTo(payload, driver.LocalEndPoint);
            // Bursts of 50 (still several per recvmmsg call): 200 datagrams at once can overflow the default socket
            // receive buffer when the machine is busy, and a lost datagram here would be the kernel's, not ours.
            if (i % 50 == 49)
            {
                int sent = i + 1;
                await WaitFor(() => endpoint.Received.Count >= sent);
            }
        }
        await WaitFor(() => endpoint.Received.Count >= Count);
        (byte[] Data, NetworkAddress From)[] got = endpoint.Received.ToArray();
        Assert.Equal(Count, got.Length);
        for (int i = 0; i < Count; i++)
        {
            // Loopback keeps order.
            Assert.Equal(20 + (i * 37 % 1400), got[i].Data.Length);
            Assert.Equal((byte)i, got[i].Data[0]);
            Assert.Equal((byte)(i ^ 0x5a), got[i].Data[^1]);
            Assert.Equal(senderAddress, got[i].From);
        }
        Assert.Equal(Count, driver.DatagramsReceived);
        // Whether one call returned several datagrams depends on how fast the driver drains the socket (the GRO test
        // below checks coalescing deterministically); here the path itself must be the batched one.
        if (batching && LinuxBatchingExpected) Assert.True(driver.BatchedReceive, "the recvmmsg path was not used");
        Assert.True(driver.ReceiveCalls <= Count, $"{driver.ReceiveCalls} receive calls for {Count} datagrams");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ReceivingAllocatesNothingOnTheDriverThread(bool batching)
    {
        var endpoint = new AllocationProbeEndpoint { WarmAt = 100, EndAt = 1100 };
        using var driver = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), endpoint, enableBatching: batching);
        driver.Start();
        using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        byte[] payload = new byte[1200];
        for (int i = 0; i < endpoint.EndAt; i++)
        {
            sender.SendTo(payload, driver.LocalEndPoint);
            if (i % 50 == 49) await Task.Delay(1); // let the driver wait and wake between bursts too
        }
        await WaitFor(() => Volatile.Read(ref endpoint.AllocatedAtEnd) >= 0);
        // 1000 datagrams through receive calls, waits and wake-ups: nothing allocated (a few bytes of slack for the runtime).
        Assert.InRange(endpoint.AllocatedAtEnd - endpoint.AllocatedAtWarm, 0, 256);
    }

    [SkippableTheory]
    [InlineData("127.0.0.1")]
    [InlineData("::1")]
    public async Task AGsoBurstIsSplitBackIntoItsDatagrams(string address)
    {
        Skip.IfNot(LinuxBatchingExpected, "UDP_SEGMENT and UDP_GRO are Linux options");
        var endpoint = new RecordingEndpoint();
        var bind = new IPEndPoint(IPAddress.Parse(address), 0);
        using var driver = new UdpDriver(UdpSocketFactory.Bind(bind), endpoint);
        using var sender = new Socket(bind.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        sender.Bind(bind);
        const int Segment = 1000;
        const int Segments = 20;
        try
        {
            sender.SetRawSocketOption(17, 103, BitConverter.GetBytes(Segment)); // SOL_UDP, UDP_SEGMENT
        }
        catch (SocketException)
        {
            Skip.If(true, "this kernel has no UDP GSO");
        }
        // Queue three bursts before the driver runs, so the kernel holds them as (at most) three coalesced messages.
        byte[][] bursts = new byte[3][];
        for (int b = 0; b < bursts.Length; b++)
        {
            bursts[b] = new byte[(Segments - 1) * Segment + 300 + b]; // last datagram shorter
            for (int s = 0; s < Segments; s++) bursts[b][s * Segment] = (byte)(b * Segments + s);
            sender.SendTo(bursts[b], driver.LocalEndPoint);
        }
        driver.Start();
        int expected = bursts.Length * Segments;
        await WaitFor(() => endpoint.Received.Count >= expected);
        await Task.Delay(20);
        (byte[] Data, NetworkAddress From)[] got = endpoint.Received.ToArray();
        Assert.Equal(expected, got.Length);
        for (int i = 0; i < expected; i++)
        {
            int b = i / Segments, s = i % Segments;
            Assert.Equal(s == Segments - 1 ? 300 + b : Segment, got[i].Data.Length);
            Assert.Equal((byte)i, got[i].Data[0]);
        }
        // On loopback a GSO send reaches a UDP_GRO socket unsegmented: one message per burst, split by the driver.
        if (driver.CoalescedReceive) Assert.Equal(bursts.Length, driver.MessagesReceived);
    }

    [Fact]
    public void GroSegmentSizeIsReadFromWellFormedControlData()
    {
        Assert.Equal(1252, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(17, 104, BitConverter.GetBytes(1252))));
        // Another cmsg first (IP_TOS, say), then UDP_GRO.
        byte[] both = [.. ControlData.Cmsg(0, 1, new byte[] { 0x02 }), .. ControlData.Cmsg(17, 104, BitConverter.GetBytes(1350))];
        Assert.Equal(1350, LinuxUdpInterop.ReadGroSegmentSize(both));
        // A 16-bit value is accepted too.
        Assert.Equal(1200, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(17, 104, BitConverter.GetBytes((ushort)1200))));
        // No GRO cmsg: the message is one datagram.
        Assert.Equal(0, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(41, 50, new byte[20])));
        Assert.Equal(0, LinuxUdpInterop.ReadGroSegmentSize([]));
    }

    [Fact]
    public void MalformedControlDataYieldsNoSegmentSizeAndNeverReadsPastTheBuffer()
    {
        byte[] good = ControlData.Cmsg(17, 104, BitConverter.GetBytes(1252));
        // Truncated at every length: never throws; only the complete header + value gives the size.
        for (int cut = 0; cut < good.Length; cut++)
        {
            int size = LinuxUdpInterop.ReadGroSegmentSize(good.AsSpan(0, cut));
            Assert.True(size == 0 || cut >= IntPtr.Size + 8 + 4, $"cut {cut} gave {size}");
        }
        Assert.Equal(0, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(17, 104, BitConverter.GetBytes(1252), declaredLength: 0)));
        Assert.Equal(0, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(17, 104, BitConverter.GetBytes(1252), declaredLength: 4096)));
        Assert.Equal(0, LinuxUdpInterop.ReadGroSegmentSize(ControlData.Cmsg(17, 104, BitConverter.GetBytes(-5))));
        // Seeded random bytes: the walk ends, whatever the lengths say.
        var random = new Random(20261122);
        byte[] noise = new byte[64];
        for (int i = 0; i < 2000; i++)
        {
            random.NextBytes(noise);
            if (i % 2 == 0) MemoryMarshal.Write(noise, (long)random.Next(0, 80)); // plausible lengths to walk further
            int size = LinuxUdpInterop.ReadGroSegmentSize(noise.AsSpan(0, random.Next(0, 65)));
            Assert.True(size >= 0);
        }
    }

    [Fact]
    public void SocketAddressesAreReadForBothFamiliesAndOthersAreRefused()
    {
        byte[] v4 = new byte[16];
        MemoryMarshal.Write(v4, (ushort)LinuxUdpInterop.AfInet);
        v4[2] = 0x01; v4[3] = 0xbb; // 443
        v4[4] = 192; v4[5] = 0; v4[6] = 2; v4[7] = 1;
        Assert.True(LinuxUdpInterop.TryReadAddress(v4, out NetworkAddress a4));
        Assert.Equal(NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Parse("192.0.2.1"), 443)), a4);

        byte[] v6 = new byte[28];
        MemoryMarshal.Write(v6, (ushort)LinuxUdpInterop.AfInet6);
        v6[2] = 0x11; v6[3] = 0x5c; // 4444
        IPAddress.Parse("2001:db8::7").TryWriteBytes(v6.AsSpan(8), out _);
        Assert.True(LinuxUdpInterop.TryReadAddress(v6, out NetworkAddress a6));
        Assert.Equal(NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Parse("2001:db8::7"), 4444)), a6);

        // A dual-stack socket reports IPv4 peers as mapped addresses: they read back as IPv4.
        IPAddress.Parse("::ffff:192.0.2.1").TryWriteBytes(v6.AsSpan(8), out _);
        Assert.True(LinuxUdpInterop.TryReadAddress(v6, out NetworkAddress mapped));
        Assert.False(mapped.IsIPv6);

        Assert.False(LinuxUdpInterop.TryReadAddress(v6.AsSpan(0, 16), out _)); // IPv6 family, short name
        Assert.False(LinuxUdpInterop.TryReadAddress(v4.AsSpan(0, 4), out _));
        MemoryMarshal.Write(v4, (ushort)1); // AF_UNIX
        Assert.False(LinuxUdpInterop.TryReadAddress(v4, out _));
    }
}
