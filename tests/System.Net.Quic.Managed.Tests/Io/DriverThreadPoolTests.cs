using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Io;

namespace System.Net.Quic.Managed.Tests.Io;

public class DriverThreadPoolTests
{
    private sealed class IdleEndpoint : IDatagramEndpoint
    {
        public void Receive(Span<byte> datagram, in NetworkAddress remote, long nowUs) { }

        public bool TrySend(Span<byte> buffer, long nowUs, out OutgoingDatagram datagram)
        {
            datagram = default;
            return false;
        }

        public long NextTimeoutUs => long.MaxValue;

        public void OnTimeout(long nowUs) { }
    }

    private sealed class WorkItem(Action<long> action) : IDriverWorkItem
    {
        public void Execute(long nowUs) => action(nowUs);
    }

    private static readonly AsyncLocal<string?> s_flowed = new();

    [Fact]
    public void SequentialLoopsReuseParkedThreads()
    {
        // Other tests may take a parked thread meanwhile, so reuse is asserted over many runs, not for every one.
        var seen = new HashSet<int>();
        int reused = 0;
        for (int i = 0; i < 20; i++)
        {
            int id = 0;
            using var done = new ManualResetEventSlim();
            DriverThreadPool.Run(() => { id = Environment.CurrentManagedThreadId; done.Set(); }, "test loop " + i);
            Assert.True(done.Wait(TimeSpan.FromSeconds(5)));
            if (!seen.Add(id)) reused++;
            // The worker parks itself right after the loop returns.
            SpinWait.SpinUntil(() => DriverThreadPool.IdleCount > 0, TimeSpan.FromSeconds(1));
        }
        Assert.True(reused >= 5, $"only {reused} of 20 sequential loops ran on a reused thread");
    }

    [Fact]
    public void ConcurrentLoopsGetDistinctThreadsAndTheStartersContext()
    {
        s_flowed.Value = "starter";
        // Not disposed: a worker may still be returning from its Wait when the test ends (Dispose then made that Wait
        // throw ObjectDisposedException on the driver thread, which ended the test host).
        var release = new ManualResetEventSlim();
        using var countdown = new CountdownEvent(4);
        var ids = new int[4];
        var values = new string?[4];
        for (int i = 0; i < 4; i++)
        {
            int slot = i;
            DriverThreadPool.Run(() =>
            {
                ids[slot] = Environment.CurrentManagedThreadId;
                values[slot] = s_flowed.Value;
                countdown.Signal();
                release.Wait(TimeSpan.FromSeconds(5));
            }, "test concurrent " + i);
        }
        Assert.True(countdown.Wait(TimeSpan.FromSeconds(5)));
        release.Set();
        Assert.Equal(4, ids.Distinct().Count());
        Assert.All(values, v => Assert.Equal("starter", v));
        s_flowed.Value = null;
    }

    [Fact]
    public async Task AReusedThreadBelongsOnlyToTheDriverRunningOnIt()
    {
        var first = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new IdleEndpoint());
        first.Start();
        int firstThread = 0;
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        first.Post(new WorkItem(_ => { firstThread = Environment.CurrentManagedThreadId; ran.SetResult(); }));
        await ran.Task.WaitAsync(TimeSpan.FromSeconds(5));
        Assert.True(first.IsRunning);
        first.Dispose();
        Assert.False(first.IsRunning); // Dispose waited for the loop to end, as it waited for the thread before

        using var second = new UdpDriver(UdpSocketFactory.Bind(new IPEndPoint(IPAddress.Loopback, 0)), new IdleEndpoint());
        second.Start();
        var checks = new TaskCompletionSource<(bool First, bool Second)>(TaskCreationOptions.RunContinuationsAsynchronously);
        second.Post(new WorkItem(_ => checks.SetResult((first.IsDriverThread, second.IsDriverThread))));
        (bool onFirst, bool onSecond) = await checks.Task.WaitAsync(TimeSpan.FromSeconds(5));
        Assert.False(onFirst); // even when this is the thread that ran the first loop
        Assert.True(onSecond);
        Assert.False(second.IsDriverThread);
    }
}
