using System.Diagnostics;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// `--profile-loop handshake|requests|latency|x25519|corebulk|upload SECONDS`: runs one benchmark's body in a plain loop (no BenchmarkDotNet
/// processes) so a sampling profiler (dotnet-trace) can attach to one long-lived process. Prints the rate.
/// </summary>
internal static class ProfileLoop
{
    public static void Run(string what, int seconds)
    {
        var stopwatch = Stopwatch.StartNew();
        long operations = 0;
        if (what == "x25519")
        {
            Span<byte> k = stackalloc byte[32];
            Span<byte> pub = stackalloc byte[32];
            k.Fill(7);
            while (stopwatch.Elapsed.TotalSeconds < seconds)
            {
                System.Net.Quic.Managed.Crypto.X25519.GetPublicKey(k, pub);
                operations++;
            }
            Console.WriteLine($"x25519: {stopwatch.Elapsed.TotalMicroseconds / operations:F1} us/op");
            return;
        }
        if (what == "corebulk")
        {
            var bench = new CoreBulkTransferBenchmarks();
            bench.GlobalSetup();
            double cpuBefore = Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds;
            var elapsed = Stopwatch.StartNew();
            while (elapsed.Elapsed.TotalSeconds < seconds)
            {
                bench.Transfer();
                operations++;
            }
            double cpu = Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds - cpuBefore;
            double mib = operations * (CoreBulkTransferBenchmarks.TransferBytes / 1048576.0);
            Console.WriteLine($"corebulk: {elapsed.Elapsed.TotalMilliseconds / mib:F3} ms per MiB (wall), {cpu / mib:F3} ms CPU per MiB, {mib * 8 / 1024 / elapsed.Elapsed.TotalSeconds:F2} Gbit/s on one thread");
            bench.GlobalCleanup();
            return;
        }
        if (what == "upload")
        {
            // StreamTransferBenchmarks' 32 MiB case in a loop: the bytes allocated per MiB once warm, and by type.
            var bench = new StreamTransferBenchmarks { PayloadSize = 32 * 1024 * 1024 };
            bench.SetupManaged();
            for (int i = 0; i < 3; i++) bench.Managed().GetAwaiter().GetResult();
            using var ticks = new AllocationTickListener();
            long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
            var elapsed = Stopwatch.StartNew();
            while (elapsed.Elapsed.TotalSeconds < seconds)
            {
                bench.Managed().GetAwaiter().GetResult();
                operations++;
            }
            double mib = operations * 32.0;
            Console.WriteLine($"upload: {elapsed.Elapsed.TotalMilliseconds / operations:F1} ms per 32 MiB, {(GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore) / mib:F0} B allocated per MiB");
            foreach (var kv in ticks.Samples.ToArray().OrderByDescending(k => k.Value).Take(15)) Console.WriteLine($"{kv.Value,6} {kv.Key}");
            bench.Cleanup();
            return;
        }
        if (what == "latency")
        {
            using LoopbackPair pair = LoopbackPair.Start(PerfTransportKind.Managed);
            var buf = new byte[1024];
            double tc = 0, to = 0, tr = 0, td = 0;
            while (stopwatch.Elapsed.TotalSeconds < seconds)
            {
                long t0 = Stopwatch.GetTimestamp();
                PerfClientConnection connection = pair.Transport.ConnectAsync(default).GetAwaiter().GetResult();
                long t1 = Stopwatch.GetTimestamp();
                Stream stream = connection.OpenStreamAsync(default).AsTask().GetAwaiter().GetResult();
                long t2 = Stopwatch.GetTimestamp();
                PerfClientOperations.RequestAsync(stream, 1, 1, last: true, buf).GetAwaiter().GetResult();
                stream.DisposeAsync().AsTask().GetAwaiter().GetResult();
                long t3 = Stopwatch.GetTimestamp();
                connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
                long t4 = Stopwatch.GetTimestamp();
                tc += Stopwatch.GetElapsedTime(t0, t1).TotalMicroseconds; to += Stopwatch.GetElapsedTime(t1, t2).TotalMicroseconds;
                tr += Stopwatch.GetElapsedTime(t2, t3).TotalMicroseconds; td += Stopwatch.GetElapsedTime(t3, t4).TotalMicroseconds;
                operations++;
            }
            Console.WriteLine($"connect {tc / operations:F0} us, open {to / operations:F0} us, request {tr / operations:F0} us, dispose {td / operations:F0} us");
            return;
        }
        if (what == "handshake")
        {
            using var ticks = new AllocationTickListener();
            using LoopbackPair pair = LoopbackPair.Start(PerfTransportKind.Managed);
            var scratch = new byte[16][];
            for (int i = 0; i < scratch.Length; i++) scratch[i] = new byte[1024];
            while (stopwatch.Elapsed.TotalSeconds < seconds)
            {
                var tasks = new Task[scratch.Length];
                for (int i = 0; i < tasks.Length; i++) tasks[i] = HandshakeLatencyBenchmarks.ConnectAndFirstByteAsync(pair, scratch[i]);
                Task.WhenAll(tasks).GetAwaiter().GetResult();
                operations += tasks.Length;
            }
            foreach (var kv in ticks.Samples.ToArray().OrderByDescending(k => k.Value).Take(25)) Console.WriteLine($"{kv.Value,6} {kv.Key}");
        }
        else
        {
            using var ticks = new AllocationTickListener();
            var bench = new RequestResponseBenchmarks();
            bench.SetupManaged();
            while (stopwatch.Elapsed.TotalSeconds < seconds)
            {
                bench.Managed().GetAwaiter().GetResult();
                operations += 100;
            }
            bench.Cleanup();
            foreach (var kv in ticks.Samples.ToArray().OrderByDescending(k => k.Value).Take(30)) Console.WriteLine($"{kv.Value,6} {kv.Key}");
        }
        Console.WriteLine($"{what}: {operations / stopwatch.Elapsed.TotalSeconds:F0} op/s, {GC.GetTotalAllocatedBytes() / Math.Max(1, operations)} B allocated/op");
    }
}
