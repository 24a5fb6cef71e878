using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>One qperf-like run: handshake, timed (or sized) download on N streams, per-second report, summary.</summary>
public sealed class PerfRun
{
    private const double MiB = 1024.0 * 1024.0;

    private readonly PerfOptions _options;
    private long _received;
    private long _reads;
    private int _failedStreams;
    private string? _firstFailure;
    private long _firstByteTicks = long.MaxValue;

    public PerfRun(PerfOptions options) => _options = options;

    public async Task<int> RunAsync()
    {
        PerfTransportKind kind = _options.Provider;
        string name = PerfTransport.DisplayName(kind);
        if (!PerfTransport.IsAvailable(kind, out string reason))
        {
            Console.Error.WriteLine($"provider {name} is not available on this machine: {reason}");
            return 2;
        }

        using X509Certificate2 certificate = SelfSignedCertificate.Create(_options.RsaCertificate);
        IPEndPoint? remote = null;
        if (_options.ClientOf is { } host)
        {
            IPAddress? address = IPAddress.TryParse(host, out IPAddress? literal) ? literal : null;
            if (address is null)
            {
                IPAddress[] found = await Dns.GetHostAddressesAsync(host).ConfigureAwait(false);
                address = found.Length > 0 ? found[0] : null;
            }
            if (address is null)
            {
                Console.Error.WriteLine($"cannot resolve '{host}'");
                return 1;
            }
            remote = new IPEndPoint(address, _options.Port);
        }
        var transportOptions = new PerfTransportOptions
        {
            Address = _options.Server ? (_options.IPv6 ? IPAddress.IPv6Any : IPAddress.Any) : _options.IPv6 ? IPAddress.IPv6Loopback : IPAddress.Loopback,
            Port = _options.Server ? _options.Port : 0,
            Remote = remote,
            Certificate = certificate,
            CipherSuite = _options.Cipher,
            StreamReceiveWindow = _options.StreamWindow,
            MaxPathDatagramSize = _options.MaxDatagram,
        };
        var wire = kind == PerfTransportKind.Managed && remote is null ? new ManagedWireCounters() : null;
        await using PerfTransport transport = PerfTransport.Create(kind);
        using var setupTimeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        if (_options.Server) return await ServeAsync(transport, transportOptions, name).ConfigureAwait(false);
        if (remote is null) await transport.StartAsync(transportOptions, setupTimeout.Token).ConfigureAwait(false);
        else transport.ConfigureClient(transportOptions);
        IPEndPoint target = remote ?? transport.ListenEndPoint;

        // Handshakes: one QUIC connection carries all streams; TCP needs a connection per stream.
        int connectionCount = transport.MultiplexesStreams ? 1 : _options.Streams;
        var connections = new List<PerfClientConnection>(connectionCount);
        double firstHandshakeMs = 0;
        double coldHandshakeMs = 0;
        try
        {
            // A first, unmeasured-for-throughput connection pays the JIT and the TLS library's one-time setup.
            long coldStart = Stopwatch.GetTimestamp();
            await (await transport.ConnectAsync(setupTimeout.Token).ConfigureAwait(false)).DisposeAsync().ConfigureAwait(false);
            coldHandshakeMs = Stopwatch.GetElapsedTime(coldStart).TotalMilliseconds;
            for (int i = 0; i < connectionCount; i++)
            {
                long start = Stopwatch.GetTimestamp();
                connections.Add(await transport.ConnectAsync(setupTimeout.Token).ConfigureAwait(false));
                if (i == 0) firstHandshakeMs = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
            }
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"{name}: connect failed: {e.GetType().Name}: {e.Message}");
            foreach (PerfClientConnection c in connections) await c.DisposeAsync().ConfigureAwait(false);
            return 1;
        }

        TlsCipherSuite negotiated = connections[0].NegotiatedCipherSuite;
        string what = _options.Bytes is { } b
            ? $"downloading {b} bytes"
            : string.Create(CultureInfo.InvariantCulture, $"downloading for {_options.Seconds:0.#} s");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{name}: connected to {target} with {negotiated}, handshake {firstHandshakeMs:F1} ms; {what} on {_options.Streams} stream(s)"));
        if (_options.Cipher is { } wanted && wanted != negotiated)
        {
            Console.WriteLine($"warning: asked for {wanted} but {negotiated} was negotiated (the provider ignores CipherSuitesPolicy)");
        }

        // Measure the transfer only: counters snapshotted after the handshake, or after the omitted seconds.
        var before = new ResourceSnapshot(wire);
        ThreadCpuSnapshot? threadsBefore = ThreadCpuSnapshot.Take();
        long transferStart = Stopwatch.GetTimestamp();
        int omit = _options.OmitSeconds;
        long deadline = _options.Bytes is null ? transferStart + (long)((_options.Seconds + omit) * Stopwatch.Frequency) : long.MaxValue;
        using var stall = new CancellationTokenSource(TimeSpan.FromSeconds((_options.Bytes is null ? _options.Seconds + omit : 3600) + 30));
        long measureStart = transferStart;
        long receivedBefore = 0;
        long readsBefore = 0;

        var tasks = new Task[_options.Streams];
        for (int i = 0; i < tasks.Length; i++)
        {
            PerfClientConnection connection = connections[transport.MultiplexesStreams ? 0 : i];
            long? perStream = _options.Bytes is { } total ? total / _options.Streams + (i < total % _options.Streams ? 1 : 0) : null;
            tasks[i] = Task.Run(() => DownloadAsync(connection, perStream, deadline, stall.Token));
        }
        Task all = Task.WhenAll(tasks);

        // qperf-style progress: one line per second of the received rate (path details with the managed provider).
        long lastBytes = 0;
        long lastTick = transferStart;
        int second = 0;
        while (true)
        {
            long nextTick = transferStart + (second + 1) * Stopwatch.Frequency;
            TimeSpan wait = TimeSpan.FromSeconds(Math.Max(0, nextTick - Stopwatch.GetTimestamp()) / (double)Stopwatch.Frequency);
            bool finished = await Task.WhenAny(all, Task.Delay(wait)).ConfigureAwait(false) == all;
            long now = Stopwatch.GetTimestamp();
            long bytes = Interlocked.Read(ref _received);
            double interval = (now - lastTick) / (double)Stopwatch.Frequency;
            second++;
            if (!finished || interval > 0.05)
            {
                string label = finished && interval < 0.95 ? $"second {second} ({interval:F2} s)" : $"second {second}";
                string path = "";
                if (wire?.ReadPath() is { } p && wire.Read() is { } w)
                {
                    // Both connection ends share these means; datagrams are both directions since the start.
                    path = string.Create(CultureInfo.InvariantCulture,
                        $"  [srtt {p.RttMs:F2} ms, cwnd {p.CongestionWindow / 1024:F0} KiB, {w.Lost - (before.Wire?.Lost ?? 0)} lost so far]");
                }
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{label}: {Mbit(bytes - lastBytes, interval) / 1000:F2} gbit/s ({bytes - lastBytes} bytes received){path}"));
            }
            lastBytes = bytes;
            lastTick = now;
            if (finished) break;
            if (second == omit && omit > 0)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"(the {omit} s above are omitted from the figures below)"));
                before = new ResourceSnapshot(wire);
                threadsBefore = ThreadCpuSnapshot.Take();
                measureStart = Stopwatch.GetTimestamp();
                receivedBefore = Interlocked.Read(ref _received);
                readsBefore = Interlocked.Read(ref _reads);
                lastBytes = receivedBefore;
                lastTick = measureStart;
            }
        }
        double elapsed = Stopwatch.GetElapsedTime(measureStart).TotalSeconds;
        var after = new ResourceSnapshot(wire);
        ThreadCpuSnapshot? threadsAfter = ThreadCpuSnapshot.Take();
        string packets = "n/a (statistics are a managed-provider extension)";
        long sentPackets = 0, lostPackets = 0;
        foreach (PerfClientConnection c in connections)
        {
            if (c is QuicApiClientConnection<System.Net.Quic.Managed.QuicConnection> quic && kind == PerfTransportKind.Managed)
            {
                System.Net.Quic.Managed.QuicConnectionStatistics st = quic.Connection.GetStatistics();
                sentPackets += st.PacketsSent;
                lostPackets += st.PacketsLost;
                packets = string.Create(CultureInfo.InvariantCulture, $"{st.PacketsSent} sent, {st.PacketsReceived} received, {st.PacketsLost} lost (client connection, handshake included)");
            }
        }

        foreach (PerfClientConnection c in connections) await c.DisposeAsync().ConfigureAwait(false);

        long received = Interlocked.Read(ref _received) - receivedBefore;
        double mib = received / MiB;
        double cpu = (after.Cpu - before.Cpu).TotalSeconds;
        long allocated = after.Allocated - before.Allocated;
        var inv = CultureInfo.InvariantCulture;
        Console.WriteLine();
        Console.WriteLine(string.Create(inv, $"summary: {name}, {_options.Streams} stream(s), {negotiated}, {(remote is null ? (_options.IPv6 ? "IPv6 loopback" : "IPv4 loopback") : "to " + target)}, {Environment.ProcessorCount} CPUs{(remote is null ? "" : "; CPU, allocations: this client process only")}"));
        Console.WriteLine(string.Create(inv, $"  transferred : {received} bytes ({mib:F1} MiB) in {elapsed:F2} s"));
        Console.WriteLine(string.Create(inv, $"  throughput  : {Mbit(received, elapsed) / 1000:F3} gbit/s ({Mbit(received, elapsed):F1} Mbit/s)"));
        Console.WriteLine(string.Create(inv, $"  connection establishment : {firstHandshakeMs:F2} ms"));
        double ttfbMs = _firstByteTicks == long.MaxValue ? double.NaN : (_firstByteTicks - transferStart) * 1000.0 / Stopwatch.Frequency;
        Console.WriteLine(string.Create(inv, $"  time to first byte       : {ttfbMs:F2} ms (request sent to first payload byte read)"));
        Console.WriteLine($"  packets     : {packets}");
        long reads = Interlocked.Read(ref _reads) - readsBefore;
        Console.WriteLine(string.Create(inv, $"  app reads   : {reads} ReadAsync calls of a {PerfRequestHandler.ChunkSize / 1024} KiB buffer, {(reads > 0 ? received / (double)reads : 0):F0} bytes each on average, {(reads > 0 ? elapsed * 1e6 / reads : 0):F0} us apart"));
        Console.WriteLine(string.Create(inv, $"  handshake   : {firstHandshakeMs:F2} ms warm ({coldHandshakeMs:F1} ms for the first, cold connection in the process incl. JIT)"));
        Console.WriteLine(string.Create(inv, $"  CPU time    : {cpu:F2} s ({100 * cpu / elapsed:F0}% of one core; {(mib > 0 ? 1000 * cpu / mib : 0):F2} ms per MiB, client+server)"));
        Console.WriteLine(string.Create(inv, $"  allocated   : {allocated / MiB:F2} MiB = {(mib > 0 ? allocated / mib : 0):F0} bytes per MiB transferred (client+server, GC.GetTotalAllocatedBytes)"));
        Console.WriteLine(string.Create(inv, $"  GCs         : gen0 {after.Gen0 - before.Gen0}, gen1 {after.Gen1 - before.Gen1}, gen2 {after.Gen2 - before.Gen2}"));
        long workItems = after.WorkItems - before.WorkItems;
        Console.WriteLine(string.Create(inv, $"  thread pool : {workItems} work items run, {(mib > 0 ? workItems / mib : 0):F1} per MiB (ThreadPool.CompletedWorkItemCount: continuations of reads and writes, each a wake-up of a worker that spins before it sleeps)"));
        if (before.Wire is { } w0 && after.Wire is { } w1)
        {
            long datagrams = w1.Datagrams - w0.Datagrams;
            long wireBytes = w1.Bytes - w0.Bytes;
            Console.WriteLine(string.Create(inv,
                $"  wire        : {datagrams} datagrams, {wireBytes / MiB:F1} MiB UDP payload ({(received > 0 ? wireBytes / (double)received : 0):F3}x the data read; a timed run also counts what was in flight or unread when the reader stopped), {w1.Lost - w0.Lost} packets lost (both directions)"));
        }
        else if (kind == PerfTransportKind.Managed && remote is null)
        {
            Console.WriteLine("  wire        : n/a (QuicTelemetryCounters not found in System.Net.Quic.Managed)");
        }

        if (threadsBefore is not null && threadsAfter is not null)
        {
            var busiest = threadsAfter.Since(threadsBefore);
            var parts = new List<string>();
            for (int i = 0; i < busiest.Count && i < 6; i++)
            {
                parts.Add(string.Create(inv, $"{busiest[i].Name} {busiest[i].Seconds:F2} s"));
            }
            Console.WriteLine($"  CPU by thread: {string.Join(", ", parts)}");
        }

        if (_failedStreams > 0)
        {
            Console.Error.WriteLine($"{_failedStreams} stream(s) failed; first: {_firstFailure}");
            return 1;
        }
        if (_options.Bytes is { } expected && received != expected)
        {
            Console.Error.WriteLine($"received {received} bytes, expected {expected}");
            return 1;
        }
        return 0;
    }

    /// <summary>-s: serves downloads on the given port until Ctrl-C (or SIGTERM).</summary>
    private static async Task<int> ServeAsync(PerfTransport transport, PerfTransportOptions options, string name)
    {
        using var stop = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            stop.Cancel();
        };
        using var sigterm = System.Runtime.InteropServices.PosixSignalRegistration.Create(System.Runtime.InteropServices.PosixSignal.SIGTERM, c =>
        {
            c.Cancel = true;
            stop.Cancel();
        });
        try
        {
            await transport.StartAsync(options, stop.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is System.Net.Sockets.SocketException or System.Net.Quic.Managed.QuicException)
        {
            Console.Error.WriteLine($"{name}: cannot listen on port {options.Port}: {e.Message}");
            return 1;
        }
        Console.WriteLine($"{name}: serving on {transport.ListenEndPoint} (ALPN {PerfTransportOptions.Alpn}); Ctrl-C to stop");
        try
        {
            await Task.Delay(Timeout.Infinite, stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        return 0;
    }

    private async Task DownloadAsync(PerfClientConnection connection, long? bytes, long deadline, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[PerfRequestHandler.ChunkSize];
        Stream? stream = null;
        try
        {
            stream = await connection.OpenStreamAsync(cancellationToken).ConfigureAwait(false);
            byte[] header = new PerfRequestHeader(0, bytes ?? PerfRequestHeader.Unlimited, Last: true).ToArray();
            await PerfStreamOperations.WriteAsync(stream, header, completeWrites: true, cancellationToken).ConfigureAwait(false);
            while (true)
            {
                int n = await stream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                if (n == 0) break;
                if (_firstByteTicks == long.MaxValue) Interlocked.CompareExchange(ref _firstByteTicks, Stopwatch.GetTimestamp(), long.MaxValue);
                Interlocked.Add(ref _received, n);
                Interlocked.Increment(ref _reads);
                if (Stopwatch.GetTimestamp() >= deadline)
                {
                    PerfStreamOperations.AbortRead(stream);
                    break;
                }
            }
        }
        catch (Exception e)
        {
            if (Interlocked.Increment(ref _failedStreams) == 1)
            {
                _firstFailure = cancellationToken.IsCancellationRequested ? "stalled: no progress before the watchdog fired" : $"{e.GetType().Name}: {e.Message}";
            }
        }
        finally
        {
            if (stream is not null && connection is not TcpTlsClientConnection) await stream.DisposeAsync().ConfigureAwait(false);
        }
    }

    private static double Mbit(long bytes, double seconds) => seconds <= 0 ? 0 : bytes * 8 / seconds / 1e6;

    private readonly struct ResourceSnapshot
    {
        public ResourceSnapshot(ManagedWireCounters? wire)
        {
            Cpu = Process.GetCurrentProcess().TotalProcessorTime;
            Allocated = GC.GetTotalAllocatedBytes(precise: true);
            Gen0 = GC.CollectionCount(0);
            Gen1 = GC.CollectionCount(1);
            Gen2 = GC.CollectionCount(2);
            WorkItems = ThreadPool.CompletedWorkItemCount;
            Wire = wire?.Read();
        }

        public TimeSpan Cpu { get; }

        public long Allocated { get; }

        public int Gen0 { get; }

        public int Gen1 { get; }

        public int Gen2 { get; }

        public long WorkItems { get; }

        public (long Datagrams, long Bytes, long Lost)? Wire { get; }
    }
}
