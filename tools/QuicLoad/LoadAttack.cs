using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Quic.Managed;
using System.Security.Cryptography.X509Certificates;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>
/// The attack modes: the server runs in this process (on the chosen provider), the attacking clients in a child process
/// of this tool (<c>attack-client</c>, always the managed provider, which lets a client advertise tiny receive windows),
/// so this process's RSS and GC heap are the server's alone.
/// <para>
/// slow-reader: each attacking connection advertises 2,048 bytes per stream and 256 KiB for the connection, opens its
/// streams, asks each for a response of <c>--size</c> bytes and never reads. A well-behaved client downloads before
/// and during the attack. Passes when the server's RSS grew less than <c>--max-growth</c> over its baseline.
/// </para>
/// <para>
/// flood: connections complete their handshake and stay silent, then close; the server's RSS and GC heap are reported
/// at the baseline, with all of them open, and after they ended and a forced full collection.
/// </para>
/// </summary>
public static class LoadAttack
{
    /// <summary>Receive windows of an attacking slow reader: per stream and per connection.</summary>
    public const int SlowReaderStreamWindow = 2048, SlowReaderConnectionWindow = 256 * 1024;

    /// <summary>Bytes the well-behaved client downloads on one stream, before and during the attack.</summary>
    public const int GoodClientBytes = 32 << 20;

    public static async Task<int> RunAsync(LoadOptions options)
    {
        string provider = LoadOptions.Name(options.Provider);
        if (!QuicConnection.IsProviderSupported(options.Provider))
        {
            Console.Error.WriteLine($"provider {provider} is not available on this machine (msquic: is libmsquic on LD_LIBRARY_PATH?)");
            return 2;
        }

        bool slowReader = options.Mode == LoadMode.SlowReader;
        Console.WriteLine(slowReader
            ? $"QuicLoad slow-reader: server on {provider}; {options.Count} attacking connections x {options.StreamsPerConnection} streams asking {options.ResponseSize} B each "
              + $"with {SlowReaderStreamWindow} B stream / {SlowReaderConnectionWindow / 1024} KiB connection windows, never reading, for {options.DurationSeconds:0.#} s"
            : $"QuicLoad flood: server on {provider}; {options.Count} connections complete the handshake ({options.Parallel} at a time), stay silent, then close");
        using X509Certificate2 certificate = SelfSignedCertificate.Create(rsa: options.RsaCertificate);
        var counters = new LoadCounters();
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(options.TimeLimitSeconds));
        LoadServer server = await LoadServer.StartAsync(options, certificate, counters, limit.Token).ConfigureAwait(false);
        int exit;
        await using (server.ConfigureAwait(false))
        {
            var clock = Stopwatch.StartNew();
            using Process child = StartClient(options, server.EndPoint);
            Memory baseline = Memory.Now();
            long peakRss = 0, servingRss = 0;
            var lines = new List<string>();
            Task<string?> nextLine = child.StandardOutput.ReadLineAsync(limit.Token).AsTask();
            Memory? withAll = null;
            long allocatedAtLive = -1;
            int collectionsAtLive = 0;
            double nextReport = 1;
            while (true)
            {
                Task done = await Task.WhenAny(nextLine, Task.Delay(250, limit.Token)).ConfigureAwait(false);
                long rss = ResourceSample.ReadRss();
                if (peakRss > 0) peakRss = Math.Max(peakRss, rss);
                if (peakRss > 0 && clock.Elapsed.TotalSeconds >= nextReport)
                {
                    nextReport = Math.Floor(clock.Elapsed.TotalSeconds) + 1;
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"  {clock.Elapsed.TotalSeconds,5:0.0} s  server RSS {rss / 1048576.0,7:0.0} MiB (+{(rss - baseline.Rss) / 1048576.0:0.0})  GC heap {GC.GetTotalMemory(false) / 1048576.0,6:0.0} MiB  connections {server.OpenConnections}"));
                }
                if (done != nextLine) continue;
                string? line = await nextLine.ConfigureAwait(false);
                if (line is null) break;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {clock.Elapsed.TotalSeconds,5:0.0} s  client: {line}"));
                lines.Add(line);
                if (line.StartsWith("warmed up", StringComparison.Ordinal))
                {
                    // The paths the run takes are compiled and the pools primed: the baseline, then the run proper.
                    baseline = Memory.AfterFullCollection();
                    peakRss = baseline.Rss;
                    Console.WriteLine($"server baseline (after the warm-up and a full collection): {baseline}");
                    await child.StandardInput.WriteLineAsync("go").ConfigureAwait(false);
                    await child.StandardInput.FlushAsync(limit.Token).ConfigureAwait(false);
                }
                else if (line.StartsWith("attack ready", StringComparison.Ordinal))
                {
                    servingRss = peakRss; // the most RSS while serving the well-behaved client alone
                }
                else if (line.StartsWith("good during", StringComparison.Ordinal))
                {
                    // What the attack holds live, apart from garbage not collected yet.
                    Memory live = Memory.AfterFullCollection();
                    Console.WriteLine($"server during the attack, after a full collection: {live} (+{(live.Rss - baseline.Rss) / 1048576.0:0.0} MiB RSS; {System.Net.Quic.Managed.Streams.StreamChunkPool.CachedChunks} stream chunks pooled)");
                    allocatedAtLive = GC.GetTotalAllocatedBytes(precise: true);
                    collectionsAtLive = GC.CollectionCount(0);
                }
                else if (line.StartsWith("all connected", StringComparison.Ordinal))
                {
                    // flood: every connection is up and silent; sample, then let the client close them.
                    await Task.Delay(1000, limit.Token).ConfigureAwait(false);
                    withAll = Memory.Now();
                    Console.WriteLine($"server with {server.OpenConnections} connections open: {withAll}");
                    await child.StandardInput.WriteLineAsync("close").ConfigureAwait(false);
                    await child.StandardInput.FlushAsync(limit.Token).ConfigureAwait(false);
                }
                nextLine = child.StandardOutput.ReadLineAsync(limit.Token).AsTask();
            }
            await child.WaitForExitAsync(limit.Token).ConfigureAwait(false);
            string errors = await child.StandardError.ReadToEndAsync(limit.Token).ConfigureAwait(false);
            if (errors.Length > 0) Console.WriteLine("  client stderr: " + errors.Trim());

            // The server's side of the connections ends once the client's closes (or its idle timeout) arrive.
            while (server.OpenConnections > 0 && !limit.IsCancellationRequested) await Task.Delay(100, limit.Token).ConfigureAwait(false);
            if (allocatedAtLive >= 0)
            {
                // What the rest of the attack and its end (every stream failing at once) allocated: garbage, the source of the peak.
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"server allocated {(GC.GetTotalAllocatedBytes(precise: true) - allocatedAtLive) / 1048576.0:0.0} MiB from the live sample to the connections' end ({GC.CollectionCount(0) - collectionsAtLive} gen0 collections)"));
            }
            Memory after = Memory.AfterFullCollection();
            double growth = (peakRss - baseline.Rss) / 1048576.0;
            string overServing = servingRss > 0
                ? string.Create(CultureInfo.InvariantCulture, $", +{(peakRss - servingRss) / 1048576.0:0.0} MiB over its RSS serving the well-behaved client alone")
                : "";
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"server peak RSS {peakRss / 1048576.0:0.0} MiB: +{growth:0.0} MiB over the baseline") + overServing);
            Console.WriteLine($"server after the connections ended and a full collection: {after}");
            // Connections in their closing or draining period (RFC 9000 §10.2) are gone a few PTOs later.
            await Task.Delay(5000, limit.Token).ConfigureAwait(false);
            Console.WriteLine($"server 5 s later, after another full collection: {Memory.AfterFullCollection()}");
            Console.WriteLine(slowReader
                ? $"server stream failures {counters.ServerFailures} (the attacker's streams end aborted), client exit code {child.ExitCode}"
                : $"server failures {counters.ServerFailures}, client exit code {child.ExitCode}");
            if (slowReader)
            {
                bool grewTooMuch = peakRss - baseline.Rss >= options.MaxGrowthBytes;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"result: RSS growth {growth:0.0} MiB {(grewTooMuch ? ">=" : "<")} {options.MaxGrowthBytes / 1048576.0:0} MiB limit; well-behaved client {GoodRate(lines, "before")} before, {GoodRate(lines, "during")} during the attack"));
                exit = grewTooMuch || child.ExitCode != 0 ? 1 : 0;
            }
            else
            {
                exit = child.ExitCode == 0 && withAll is not null ? 0 : 1;
            }
        }

        return limit.IsCancellationRequested ? 1 : exit;
    }

    private static string GoodRate(List<string> lines, string phase)
    {
        string? line = lines.FirstOrDefault(l => l.StartsWith("good " + phase + " ", StringComparison.Ordinal));
        return line is null ? "(no run)" : line.Substring(("good " + phase + " ").Length);
    }

    private static Process StartClient(LoadOptions options, IPEndPoint server)
    {
        var start = new ProcessStartInfo
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        string host = Environment.ProcessPath ?? "dotnet";
        if (Path.GetFileNameWithoutExtension(host) == "dotnet")
        {
            start.FileName = host;
            start.ArgumentList.Add(typeof(LoadAttack).Assembly.Location);
        }
        else
        {
            start.FileName = host;
        }
        string[] args = options.Mode == LoadMode.SlowReader
            ? ["attack-client", server.ToString(), "--attack", "slow-reader", "--connections", Invariant(options.Count),
               "--streams", Invariant(options.StreamsPerConnection), "--size", Invariant(options.ResponseSize), "--seconds", Invariant(options.DurationSeconds)]
            : ["attack-client", server.ToString(), "--attack", "flood", "--connections", Invariant(options.Count), "--parallel", Invariant(options.Parallel)];
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }
        // The clients are always the managed provider's (small receive windows are a managed-only setting).
        start.Environment["DOTNET_SYSTEM_NET_QUIC_PROVIDER"] = "managed";
        return Process.Start(start) ?? throw new InvalidOperationException("cannot start the client process");
    }

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>attack-client: the child process's side. Prints one line per step on stdout.</summary>
    public static async Task<int> RunClientAsync(LoadOptions options)
    {
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(options.TimeLimitSeconds));
        var endpoint = IPEndPoint.Parse(options.Target!);
        try
        {
            if (options.Attack == "flood") return await FloodAsync(options, endpoint, limit.Token).ConfigureAwait(false);
            return await SlowReaderAsync(options, endpoint, limit.Token).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"{e.GetType().Name}: {e.Message}");
            return 1;
        }
    }

    private static QuicClientConnectionOptions ClientOptions(IPEndPoint server, QuicReceiveWindowSizes? windows)
    {
        QuicClientConnectionOptions options = LoadProtocol.ClientOptions(server);
        options.IdleTimeout = TimeSpan.FromMinutes(5);
        if (windows is not null) options.InitialReceiveWindowSizes = windows;
        return options;
    }

    /// <summary>Tells the server process the warm-up is over and waits for its baseline ("go" on stdin).</summary>
    private static async Task WarmedUpAsync(CancellationToken cancellationToken)
    {
        Console.WriteLine("warmed up");
        await Console.In.ReadLineAsync(cancellationToken).ConfigureAwait(false);
    }

    private static async Task<int> SlowReaderAsync(LoadOptions options, IPEndPoint server, CancellationToken cancellationToken)
    {
        await GoodClientAsync(server, "warm-up", cancellationToken).ConfigureAwait(false);
        await WarmedUpAsync(cancellationToken).ConfigureAwait(false);
        await GoodClientAsync(server, "before", cancellationToken).ConfigureAwait(false);
        var windows = new QuicReceiveWindowSizes
        {
            Connection = SlowReaderConnectionWindow,
            LocallyInitiatedBidirectionalStream = SlowReaderStreamWindow,
            RemotelyInitiatedBidirectionalStream = SlowReaderStreamWindow,
            UnidirectionalStream = SlowReaderStreamWindow,
        };
        var attackers = new List<QuicConnection>();
        var streams = new List<QuicStream>();
        try
        {
            byte[] header = new byte[LoadProtocol.HeaderSize];
            BinaryPrimitives.WriteUInt32BigEndian(header.AsSpan(4), (uint)options.ResponseSize);
            for (int c = 0; c < options.Count; c++)
            {
                QuicConnection connection = await QuicConnection.ConnectAsync(ClientOptions(server, windows), cancellationToken).ConfigureAwait(false);
                attackers.Add(connection);
                for (int s = 0; s < options.StreamsPerConnection; s++)
                {
                    QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);
                    await stream.WriteAsync(header, completeWrites: true, cancellationToken).ConfigureAwait(false);
                    streams.Add(stream); // never read
                }
            }
            Console.WriteLine($"attack ready: {attackers.Count} connections, {streams.Count} streams");
            await Task.Delay(TimeSpan.FromSeconds(options.DurationSeconds / 2), cancellationToken).ConfigureAwait(false);
            await GoodClientAsync(server, "during", cancellationToken).ConfigureAwait(false);
            await Task.Delay(TimeSpan.FromSeconds(options.DurationSeconds / 2), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            // Closing the connections ends their streams; the streams are not disposed one by one (each would wait for
            // its own end).
            await Task.WhenAll(attackers.Select(c => c.DisposeAsync().AsTask())).ConfigureAwait(false);
        }
        Console.WriteLine("attack over");
        return 0;
    }

    /// <summary>One connection downloading <see cref="GoodClientBytes"/> on one stream; prints "good PHASE N MiB/s".</summary>
    private static async Task GoodClientAsync(IPEndPoint server, string phase, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        QuicConnection connection = await QuicConnection.ConnectAsync(ClientOptions(server, null), cancellationToken).ConfigureAwait(false);
        await using (connection.ConfigureAwait(false))
        {
            QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                await LoadProtocol.RequestAsync(stream, 0, GoodClientBytes, cancellationToken).ConfigureAwait(false);
            }
        }
        double seconds = clock.Elapsed.TotalSeconds;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"good {phase} {GoodClientBytes / 1048576.0 / seconds:0} MiB/s ({GoodClientBytes >> 20} MiB in {seconds:0.00} s, handshake included)"));
    }

    private static async Task<int> FloodAsync(LoadOptions options, IPEndPoint server, CancellationToken cancellationToken)
    {
        for (int i = 0; i < 16; i++)
        {
            await (await QuicConnection.ConnectAsync(ClientOptions(server, null), cancellationToken).ConfigureAwait(false)).DisposeAsync().ConfigureAwait(false);
        }
        await WarmedUpAsync(cancellationToken).ConfigureAwait(false);
        var connections = new QuicConnection[options.Count];
        int next = -1;
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, Math.Min(options.Parallel, options.Count)).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < connections.Length)
            {
                connections[i] = await QuicConnection.ConnectAsync(ClientOptions(server, null), cancellationToken).ConfigureAwait(false);
            }
        })).ConfigureAwait(false);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"all connected: {connections.Length} in {clock.Elapsed.TotalSeconds:0.00} s"));
        await Console.In.ReadLineAsync(cancellationToken).ConfigureAwait(false); // "close"
        foreach (QuicConnection connection in connections) await connection.DisposeAsync().ConfigureAwait(false);
        Console.WriteLine("closed");
        return 0;
    }

    /// <summary>RSS and GC heap of this process.</summary>
    private readonly record struct Memory(long Rss, long Heap)
    {
        public static Memory Now() => new(ResourceSample.ReadRss(), GC.GetTotalMemory(forceFullCollection: false));

        public static Memory AfterFullCollection()
        {
            for (int i = 0; i < 2; i++)
            {
                // Aggressive: also gives the memory the GC holds for later allocations back to the system.
                GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
                GC.WaitForPendingFinalizers();
            }
            return Now();
        }

        public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"RSS {Rss / 1048576.0:0.0} MiB, GC heap {Heap / 1048576.0:0.0} MiB");
    }
}
