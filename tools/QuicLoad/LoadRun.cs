using System.Diagnostics;
using System.Globalization;
using System.Net.Quic.Managed;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>One load run: server, clients, a sample every second, the summary.</summary>
public sealed class LoadRun
{
    private const double MiB = 1024.0 * 1024.0;
    private static readonly JsonSerializerOptions s_json = new() { WriteIndented = true };

    private readonly LoadOptions _options;
    private readonly LoadCounters _counters = new();
    private readonly List<ResourceSample> _samples = [];
    // Set while QuicLoad measures an idle process: the 1 s sampler (which lists /proc/self/fd and prints) stays quiet.
    private volatile bool _samplerPaused;
    private readonly Stopwatch _clock = new();
    private readonly TextWriter _out;
    private QuicClientConnectionOptions _clientOptions = null!;
    private long _timedStreamsStart;
    private long _timedConnectionsStart;
    private double _timedStart;
    private double _timedEnd;
    // The connections mode's timed window, whole process: bytes allocated, CPU time, datagrams sent (managed only).
    private (long Allocated, TimeSpan Cpu, long Datagrams) _windowStart;
    private (long Allocated, TimeSpan Cpu, long Datagrams) _windowEnd;
    private string _baselineFdKinds = "";
    private int _baselineSockets;

    public LoadRun(LoadOptions options)
    {
        _options = options;
        // With --json - the JSON is the standard output; the progress goes to stderr.
        _out = options.JsonPath == "-" ? Console.Error : Console.Out;
    }

    private TimeSpan OperationTimeout => TimeSpan.FromSeconds(_options.OperationTimeoutSeconds);

    public async Task<int> RunAsync()
    {
        string provider = LoadOptions.Name(_options.Provider);
        if (!QuicConnection.IsProviderSupported(_options.Provider))
        {
            Console.Error.WriteLine($"provider {provider} is not available on this machine (msquic: is libmsquic on LD_LIBRARY_PATH?)");
            return 2;
        }

        _out.WriteLine($"QuicLoad {Describe()}: provider {provider}, {(_options.IPv6 ? "::1" : "127.0.0.1")}, "
            + $"{(_options.RsaCertificate ? "RSA-2048" : "ECDSA P-256") } certificate, request {_options.RequestSize} B, response {_options.ResponseSize} B, time limit {_options.TimeLimitSeconds:0} s");
        using X509Certificate2 certificate = SelfSignedCertificate.Create(rsa: _options.RsaCertificate);
        ResourceSample baseline = ResourceSample.Take(0, _counters);
        _baselineFdKinds = FdKinds();
        _baselineSockets = Sockets();
        using var run = new CancellationTokenSource(TimeSpan.FromSeconds(_options.TimeLimitSeconds));
        _clock.Start();
        bool complete;
        ResourceSample last;
        int serverConnectionsLeft;
        LoadServer server = await LoadServer.StartAsync(_options, certificate, _counters, run.Token).ConfigureAwait(false);
        try
        {
            _clientOptions = LoadProtocol.ClientOptions(server.EndPoint);

            using var samplerStop = new CancellationTokenSource();
            Task sampler = SampleAsync(server, samplerStop.Token);
            try
            {
                complete = await RunModeAsync(run.Token).ConfigureAwait(false) && !run.IsCancellationRequested;
            }
            finally
            {
                samplerStop.Cancel();
                await sampler.ConfigureAwait(false);
            }

            last = ResourceSample.Take(_clock.Elapsed.TotalSeconds, _counters);
            _samples.Add(last);
        }
        finally
        {
            serverConnectionsLeft = server.OpenConnections;
            await server.DisposeAsync().ConfigureAwait(false);
        }

        double elapsed = last.Seconds;
        // What stays once everything is disposed: the leak check. A disposed managed connection keeps its socket (and
        // two wake-up sockets) through its closing period (RFC 9000 §10.2, 3 PTO), so wait (at most 30 s) until the
        // sockets are back to what the process had before the run.
        double releaseStart = _clock.Elapsed.TotalSeconds;
        ResourceSample after;
        while (true)
        {
            for (int i = 0; i < 2; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }

            after = ResourceSample.Take(_clock.Elapsed.TotalSeconds, _counters);
            if (Sockets() <= _baselineSockets || after.Seconds - releaseStart >= 30) break;
            await Task.Delay(250).ConfigureAwait(false);
        }

        return Report(complete, elapsed, baseline, after with { Seconds = after.Seconds - releaseStart }, serverConnectionsLeft);
    }

    private string Describe() => _options.Mode switch
    {
        LoadMode.Sequential => $"sequential {_options.Count}",
        LoadMode.Concurrent => $"concurrent {_options.Count} x {_options.StreamsPerConnection}",
        LoadMode.Streams => $"streams {_options.Count} (parallel {_options.Parallel})",
        LoadMode.Connections => $"connections {_options.Count} x {_options.DurationSeconds:0.##} s (parallel {_options.Parallel})",
        LoadMode.Handshakes => $"handshakes {_options.DurationSeconds:0.##} s (parallel {_options.Parallel})",
        LoadMode.Idle => $"idle {_options.Count} x one busy connection for {_options.DurationSeconds:0.##} s",
        _ => $"soak {_options.DurationSeconds / 60:0.##} min ({_options.Count} workers, parallel {_options.Parallel}, recycle 1..{_options.Recycle})",
    };

    /// <summary>Runs the mode; false when it could not do all it was asked (a connection it needed failed).</summary>
    private Task<bool> RunModeAsync(CancellationToken run) => _options.Mode switch
    {
        LoadMode.Sequential => SequentialAsync(run),
        LoadMode.Concurrent => ConcurrentAsync(run),
        LoadMode.Streams => StreamsAsync(run),
        LoadMode.Connections => ConnectionsAsync(run),
        LoadMode.Handshakes => HandshakesAsync(run),
        LoadMode.Idle => IdleAsync(run),
        _ => SoakAsync(run),
    };

    private async Task<bool> SequentialAsync(CancellationToken run)
    {
        for (int i = 0; i < _options.Count && !run.IsCancellationRequested; i++)
        {
            QuicConnection? connection = await ConnectAsync(run).ConfigureAwait(false);
            if (connection is null) continue;
            await StreamAsync(connection, _options.ResponseSize, run).ConfigureAwait(false);
            await CloseAsync(connection, graceful: true, run).ConfigureAwait(false);
        }

        return true;
    }

    private async Task<bool> ConcurrentAsync(CancellationToken run)
    {
        await Task.WhenAll(Enumerable.Range(0, _options.Count).Select(async _ =>
        {
            QuicConnection? connection = await ConnectAsync(run).ConfigureAwait(false);
            if (connection is null) return;
            await Task.WhenAll(Enumerable.Range(0, _options.StreamsPerConnection).Select(_ => StreamAsync(connection, _options.ResponseSize, run))).ConfigureAwait(false);
            await CloseAsync(connection, graceful: true, run).ConfigureAwait(false);
        })).ConfigureAwait(false);
        return true;
    }

    private async Task<bool> StreamsAsync(CancellationToken run)
    {
        QuicConnection? connection = await ConnectAsync(run).ConfigureAwait(false);
        if (connection is null) return false;
        await RunStreamsAsync(connection, _options.Count, () => _options.ResponseSize, run).ConfigureAwait(false);
        await CloseAsync(connection, graceful: true, run).ConfigureAwait(false);
        return true;
    }

    private async Task<bool> ConnectionsAsync(CancellationToken run)
    {
        QuicConnection?[] connections = await Task.WhenAll(Enumerable.Range(0, _options.Count).Select(_ => ConnectAsync(run))).ConfigureAwait(false);
        _timedStreamsStart = _counters.Streams;
        _counters.StartStreamSampling();
        _windowStart = ProcessCost();
        _timedStart = _clock.Elapsed.TotalSeconds;
        double end = _timedStart + _options.DurationSeconds;
        await Task.WhenAll(connections.OfType<QuicConnection>().SelectMany(c => Enumerable.Range(0, _options.Parallel).Select(async _ =>
        {
            while (_clock.Elapsed.TotalSeconds < end && !run.IsCancellationRequested)
            {
                if (!await StreamAsync(c, _options.ResponseSize, run).ConfigureAwait(false)) return;
            }
        }))).ConfigureAwait(false);
        _windowEnd = ProcessCost();
        _timedEnd = _clock.Elapsed.TotalSeconds;
        await Task.WhenAll(connections.OfType<QuicConnection>().Select(c => CloseAsync(c, graceful: true, run))).ConfigureAwait(false);
        return connections.All(c => c is not null);
    }

    /// <summary>
    /// One busy connection alone for T seconds; N idle connections set up (memory per connection), the process idle for
    /// --idle-seconds (CPU); the busy connection T seconds again beside them. A line per phase and a closing "idle result".
    /// </summary>
    private async Task<bool> IdleAsync(CancellationToken run)
    {
        _clientOptions.IdleTimeout = TimeSpan.FromMinutes(30);
        QuicConnection? busy = await ConnectAsync(run).ConfigureAwait(false);
        if (busy is null) return false;
        await WarmUpAsync(busy, run).ConfigureAwait(false);
        GcActivity gcAlone = GcActivity.Now();
        double alone = await BusyStreamsAsync(busy, _options.DurationSeconds, run).ConfigureAwait(false);
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  busy connection alone: {alone:0} streams/s; {GcActivity.Now().Since(gcAlone)}"));

        ResourceSample before = SampleAfterCollect();
        var idle = new QuicConnection?[_options.Count];
        int next = -1;
        await Task.WhenAll(Enumerable.Range(0, Math.Min(_options.Parallel, Math.Max(1, _options.Count))).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < idle.Length && !run.IsCancellationRequested) idle[i] = await ConnectAsync(run).ConfigureAwait(false);
        })).ConfigureAwait(false);
        int opened = idle.Count(c => c is not null);
        ResourceSample after = SampleAfterCollect();
        double perConnection = Math.Max(1, opened);
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {opened} idle connections: RSS +{(after.RssBytes - before.RssBytes) / MiB:0.0} MiB ({(after.RssBytes - before.RssBytes) / perConnection / 1024:0.0} KiB each), "
            + $"GC heap +{(after.GcHeapBytes - before.GcHeapBytes) / MiB:0.0} MiB ({(after.GcHeapBytes - before.GcHeapBytes) / perConnection / 1024:0.0} KiB each), fds {after.OpenFds}, threads {after.Threads}"));

        // Every connection idle: what the process spends doing nothing (timers, wake-ups), as a share of one core, after
        // two seconds that let the set-up's last packets, finalizers and background compilation settle.
        // The sampler pauses for the window, so the figure is the library's and the runtime's alone; on Linux the CPU of
        // the library's own threads (named "QuicManaged ...") is given apart from the rest of the process.
        await Task.Delay(TimeSpan.FromSeconds(2), run).ConfigureAwait(false);
        _samplerPaused = true;
        TimeSpan cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        double libraryStart = ThreadCpu.SecondsOfThreadsNamed("QuicManaged");
        var idleClock = Stopwatch.StartNew();
        await Task.Delay(TimeSpan.FromSeconds(_options.IdleSeconds), run).ConfigureAwait(false);
        double idleCpu = (Process.GetCurrentProcess().TotalProcessorTime - cpuStart).TotalSeconds / idleClock.Elapsed.TotalSeconds;
        double libraryCpu = (ThreadCpu.SecondsOfThreadsNamed("QuicManaged") - libraryStart) / idleClock.Elapsed.TotalSeconds;
        _samplerPaused = false;
        string libraryPart = libraryStart < 0 || _options.Provider != QuicProvider.Managed
            ? "" : string.Create(CultureInfo.InvariantCulture, $" (QuicManaged's threads {libraryCpu * 100:0.00} %)");
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  all idle for {idleClock.Elapsed.TotalSeconds:0.0} s: CPU {idleCpu * 100:0.00} % of one core{libraryPart}"));

        GcActivity gcBeside = GcActivity.Now();
        double beside = await BusyStreamsAsync(busy, _options.DurationSeconds, run).ConfigureAwait(false);
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  busy connection beside {opened} idle connections: {beside:0} streams/s; {GcActivity.Now().Since(gcBeside)}"));
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  idle result: busy connection {alone:0} streams/s alone, {beside:0} streams/s beside {opened} idle connections ({beside / Math.Max(1e-9, alone):0.00}x); "
            + $"idle memory per connection RSS {(after.RssBytes - before.RssBytes) / perConnection / 1024:0.0} KiB, GC heap {(after.GcHeapBytes - before.GcHeapBytes) / perConnection / 1024:0.0} KiB; idle CPU {idleCpu * 100:0.00} %{libraryPart}"));

        await Task.WhenAll(idle.OfType<QuicConnection>().Append(busy).Select(c => CloseAsync(c, graceful: true, run))).ConfigureAwait(false);
        return opened == idle.Length;
    }

    /// <summary>
    /// Runs the busy connection in one-second slices until its rate settles, outside both timed windows: at least three
    /// slices, then until two slices in a row are within 5 % of each other (at most 20). Tiered compilation takes the
    /// managed provider's paths (the whole stack) about three to four seconds on a 2-core machine, the msquic provider's
    /// (its managed part) about one; a fixed short warm-up would time the first still compiling.
    /// </summary>
    private async Task WarmUpAsync(QuicConnection connection, CancellationToken run)
    {
        const int MinSlices = 3, MaxSlices = 20;
        var rates = new List<double>();
        while (rates.Count < MaxSlices && !run.IsCancellationRequested)
        {
            rates.Add(await BusyStreamsAsync(connection, 1, run).ConfigureAwait(false));
            if (rates.Count >= MinSlices && Math.Abs(rates[^1] - rates[^2]) <= 0.05 * Math.Max(rates[^1], rates[^2])) break;
        }
        _out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  warm-up: {rates.Count} s ({string.Join(", ", rates.Select(r => r.ToString("0", CultureInfo.InvariantCulture)))} streams/s)"));
    }

    /// <summary>Streams one at a time on <paramref name="connection"/> for <paramref name="seconds"/>: streams per second.</summary>
    private async Task<double> BusyStreamsAsync(QuicConnection connection, double seconds, CancellationToken run)
    {
        long start = _counters.Streams;
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds && !run.IsCancellationRequested)
        {
            if (!await StreamAsync(connection, _options.ResponseSize, run).ConfigureAwait(false)) break;
        }
        return (_counters.Streams - start) / clock.Elapsed.TotalSeconds;
    }

    /// <summary>The garbage collector's work so far: collections by generation and the time the process was paused for them.</summary>
    private readonly record struct GcActivity(int Gen0, int Gen1, int Gen2, TimeSpan Paused)
    {
        public static GcActivity Now() => new(GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2), GC.GetTotalPauseDuration());

        /// <summary>What happened between <paramref name="start"/> and this sample, as the tool prints it.</summary>
        public string Since(GcActivity start) => string.Create(CultureInfo.InvariantCulture,
            $"GCs in the window: gen0 {Gen0 - start.Gen0}, gen1 {Gen1 - start.Gen1}, gen2 {Gen2 - start.Gen2}, paused {(Paused - start.Paused).TotalMilliseconds:0} ms");
    }

    /// <summary>What the process spent so far: bytes allocated, CPU time, and datagrams sent by the managed provider.</summary>
    private static (long Allocated, TimeSpan Cpu, long Datagrams) ProcessCost()
        => (GC.GetTotalAllocatedBytes(precise: false), Process.GetCurrentProcess().TotalProcessorTime, System.Net.Quic.Managed.Diagnostics.QuicTelemetryCounters.DatagramsSent);

    private ResourceSample SampleAfterCollect()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        return ResourceSample.Take(_clock.Elapsed.TotalSeconds, _counters);
    }

    /// <summary>For T seconds, <see cref="LoadOptions.Parallel"/> workers each connect and close, again and again.</summary>
    private async Task<bool> HandshakesAsync(CancellationToken run)
    {
        // One connection first pays the JIT and the TLS library's one-time setup outside the timed window.
        QuicConnection? cold = await ConnectAsync(run).ConfigureAwait(false);
        if (cold is null) return false;
        await CloseAsync(cold, graceful: true, run).ConfigureAwait(false);
        _timedConnectionsStart = _counters.Connections;
        _timedStart = _clock.Elapsed.TotalSeconds;
        double end = _timedStart + _options.DurationSeconds;
        await Task.WhenAll(Enumerable.Range(0, _options.Parallel).Select(async _ =>
        {
            while (_clock.Elapsed.TotalSeconds < end && !run.IsCancellationRequested)
            {
                QuicConnection? connection = await ConnectAsync(run).ConfigureAwait(false);
                if (connection is null) return;
                await CloseAsync(connection, graceful: true, run).ConfigureAwait(false);
            }
        })).ConfigureAwait(false);
        _timedEnd = _clock.Elapsed.TotalSeconds;
        return true;
    }

    private async Task<bool> SoakAsync(CancellationToken run)
    {
        double end = _options.DurationSeconds;
        int recycled = 0;
        await Task.WhenAll(Enumerable.Range(0, _options.Count).Select(async _ =>
        {
            while (_clock.Elapsed.TotalSeconds < end && !run.IsCancellationRequested)
            {
                QuicConnection? connection = await ConnectAsync(run).ConfigureAwait(false);
                if (connection is null)
                {
                    await Task.Delay(100, CancellationToken.None).ConfigureAwait(false);
                    continue;
                }

                int streams = Random.Shared.Next(1, _options.Recycle + 1);
                await RunStreamsAsync(connection, streams, () => Random.Shared.Next(0, _options.ResponseSize + 1), run).ConfigureAwait(false);
                // Every third connection goes through DisposeAsync alone (no CloseAsync first): both ends must clean up either way.
                await CloseAsync(connection, graceful: Interlocked.Increment(ref recycled) % 3 != 0, run).ConfigureAwait(false);
            }
        })).ConfigureAwait(false);
        return true;
    }

    /// <summary><paramref name="count"/> streams on <paramref name="connection"/>, <see cref="LoadOptions.Parallel"/> at a time.</summary>
    private async Task RunStreamsAsync(QuicConnection connection, int count, Func<int> responseSize, CancellationToken run)
    {
        int next = 0;
        await Task.WhenAll(Enumerable.Range(0, Math.Min(_options.Parallel, count)).Select(async _ =>
        {
            while (Interlocked.Increment(ref next) <= count && !run.IsCancellationRequested)
            {
                // After a failure this loop stops: on a connection that has ended, every later stream would fail the same way.
                if (!await StreamAsync(connection, responseSize(), run).ConfigureAwait(false)) return;
            }
        })).ConfigureAwait(false);
    }

    private async Task<QuicConnection?> ConnectAsync(CancellationToken run)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(run);
        timeout.CancelAfter(OperationTimeout);
        long start = Stopwatch.GetTimestamp();
        try
        {
            QuicConnection connection = await QuicConnection.ConnectAsync(_clientOptions, _options.Provider, timeout.Token).ConfigureAwait(false);
            _counters.Connected(Stopwatch.GetElapsedTime(start).TotalMilliseconds);
            return connection;
        }
        catch (Exception e) when (!run.IsCancellationRequested)
        {
            _counters.Failure("connect", e);
            return null;
        }
        catch (Exception)
        {
            return null;
        }
    }

    private async Task<bool> StreamAsync(QuicConnection connection, int responseSize, CancellationToken run)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(run);
        timeout.CancelAfter(OperationTimeout);
        try
        {
            long started = Stopwatch.GetTimestamp();
            QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                long received = await LoadProtocol.RequestAsync(stream, _options.RequestSize, responseSize, timeout.Token).ConfigureAwait(false);
                _counters.StreamDone(received + _options.RequestSize, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
            }

            return true;
        }
        catch (Exception e) when (!run.IsCancellationRequested)
        {
            _counters.Failure("stream", e);
            return false;
        }
        catch (Exception)
        {
            return false;
        }
    }

    private async Task CloseAsync(QuicConnection connection, bool graceful, CancellationToken run)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(run);
        timeout.CancelAfter(OperationTimeout);
        try
        {
            if (graceful) await connection.CloseAsync(0, timeout.Token).ConfigureAwait(false);
            await connection.DisposeAsync().AsTask().WaitAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (!run.IsCancellationRequested)
        {
            _counters.Failure(graceful ? "close" : "dispose", e);
        }
        catch (Exception)
        {
        }
    }

    private async Task SampleAsync(LoadServer server, CancellationToken stop)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        ResourceSample previous = ResourceSample.Take(0, _counters);
        try
        {
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false))
            {
                if (_samplerPaused) continue;
                ResourceSample s = ResourceSample.Take(_clock.Elapsed.TotalSeconds, _counters);
                _samples.Add(s);
                double dt = Math.Max(1e-3, s.Seconds - previous.Seconds);
                string progress = _options.Mode switch
                {
                    LoadMode.Sequential => $" {s.Connections}/{_options.Count}",
                    LoadMode.Concurrent => $" {s.Streams}/{(long)_options.Count * _options.StreamsPerConnection}",
                    LoadMode.Streams => $" {s.Streams}/{_options.Count}",
                    _ => $" {Math.Min(100, 100 * s.Seconds / _options.DurationSeconds):0}%",
                };
                _out.WriteLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"[{s.Seconds,6:0}s]{progress} conns {s.Connections} ({(s.Connections - previous.Connections) / dt:0}/s) streams {s.Streams} ({(s.Streams - previous.Streams) / dt:0}/s) "
                    + $"{(s.Bytes - previous.Bytes) / dt / MiB:0.0} MiB/s fail {s.Failures} | rss {s.RssBytes / MiB:0.0} MiB gc {s.GcHeapBytes / MiB:0.0} MiB "
                    + $"threads {s.Threads} fds {s.OpenFds} | server conns {server.OpenConnections}"));
                previous = s;
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private int Report(bool complete, double elapsed, ResourceSample baseline, ResourceSample after, int serverConnectionsLeft)
    {
        double warmup = _options.WarmupSeconds ?? Math.Min(60, elapsed / 5);
        ResourceSample first = _samples.Find(s => s.Seconds >= warmup) ?? _samples[^1];
        ResourceSample last = _samples[^1];
        double[] handshakes = [.. _counters.HandshakeMilliseconds.Order()];
        double[] streamLatencies = _counters.SortedStreamMilliseconds();
        long failures = _counters.Failures + _counters.ServerFailures;
        bool timed = _options.Mode is LoadMode.Connections or LoadMode.Handshakes;
        int socketsLeft = Sockets() - _baselineSockets;
        double rateSeconds = timed ? Math.Max(1e-3, _timedEnd - _timedStart) : Math.Max(1e-3, elapsed);
        long rateStreams = timed ? _counters.Streams - _timedStreamsStart : _counters.Streams;
        var result = new LoadResult
        {
            Mode = Describe(),
            Provider = LoadOptions.Name(_options.Provider),
            Complete = complete,
            ElapsedSeconds = elapsed,
            Connections = _counters.Connections,
            Streams = _counters.Streams,
            Bytes = _counters.Bytes,
            ConnectionsPerSecond = _options.Mode == LoadMode.Handshakes
                ? (_counters.Connections - _timedConnectionsStart) / rateSeconds
                : _counters.Connections / Math.Max(1e-3, elapsed),
            StreamsPerSecond = rateStreams / rateSeconds,
            MiBPerSecond = (timed ? rateStreams * (double)(_options.ResponseSize + _options.RequestSize) : _counters.Bytes) / rateSeconds / MiB,
            HandshakeP50Ms = Percentile(handshakes, 0.50),
            HandshakeP99Ms = Percentile(handshakes, 0.99),
            HandshakeMaxMs = handshakes.Length == 0 ? 0 : handshakes[^1],
            StreamP50Ms = Percentile(streamLatencies, 0.50),
            StreamP99Ms = Percentile(streamLatencies, 0.99),
            ClientFailures = _counters.Failures,
            ServerFailures = _counters.ServerFailures,
            FailureKinds = new Dictionary<string, int>(_counters.FailureKinds),
            FailureMessages = [.. _counters.FailureMessages],
            WarmupSeconds = warmup,
            GrowthFrom = first,
            GrowthTo = last,
            Baseline = baseline,
            AfterDispose = after,
            ServerConnectionsLeftAtEnd = serverConnectionsLeft,
            SocketsLeftAfterDispose = socketsLeft,
            Samples = _samples,
        };

        if (_options.JsonPath is { } path)
        {
            string json = JsonSerializer.Serialize(result, s_json);
            if (path == "-") Console.Out.WriteLine(json);
            else File.WriteAllText(path, json);
        }

        TextWriter o = _out;
        o.WriteLine();
        o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{result.Mode}, provider {result.Provider}: {(complete ? "complete" : "INCOMPLETE (time limit or a needed connection failed)")} in {elapsed:0.0} s"));
        o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  connections {result.Connections} ({result.ConnectionsPerSecond:0.0}/s), streams {result.Streams}, {result.Bytes / MiB:0.0} MiB moved"));
        if (_options.Mode != LoadMode.Handshakes)
        {
            o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {(timed ? $"over the {rateSeconds:0.0} s of streams: " : "")}{result.StreamsPerSecond:0.0} streams/s, {result.MiBPerSecond:0.00} MiB/s ({result.MiBPerSecond * MiB * 8 / 1e9:0.000} Gbit/s)"));
        }
        else
        {
            o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  handshakes/s: {result.ConnectionsPerSecond:0.0} ({_counters.Connections - _timedConnectionsStart} connections set up and closed in {rateSeconds:0.0} s, {_options.Parallel} at a time)"));
        }

        // The same rate without the first seconds, where tiered compilation is still at work (--warmup): from the first
        // sample after the warm-up to the last one inside the timed window.
        ResourceSample? warmFrom = _samples.Find(s => s.Seconds >= Math.Max(warmup, _timedStart));
        ResourceSample? warmTo = _samples.FindLast(s => s.Seconds <= _timedEnd);
        if (_options.Mode == LoadMode.Connections && warmFrom is not null && warmTo is not null && warmTo.Seconds - warmFrom.Seconds >= 1)
        {
            o.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  after the warm-up ({warmFrom.Seconds:0.0} s to {warmTo.Seconds:0.0} s of the run): {(warmTo.Streams - warmFrom.Streams) / (warmTo.Seconds - warmFrom.Seconds):0.0} streams/s"));
        }

        if (_options.Mode == LoadMode.Connections && rateStreams > 0)
        {
            // Client and server together (one process): what one stream cost, over the timed window.
            double datagrams = (_windowEnd.Datagrams - _windowStart.Datagrams) / (double)rateStreams;
            o.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  per stream (timed window, client and server): {(_windowEnd.Allocated - _windowStart.Allocated) / (double)rateStreams:0} B allocated, "
                + $"{(_windowEnd.Cpu - _windowStart.Cpu).TotalMicroseconds / rateStreams:0} us CPU{(_options.Provider == QuicProvider.Managed ? $", {datagrams:0.0} datagrams" : "")}"));
        }

        if (streamLatencies.Length > 0)
        {
            o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  stream ms (open to response complete, timed window): p50 {result.StreamP50Ms:0.000}, p99 {result.StreamP99Ms:0.000}"));
        }

        if (handshakes.Length > 0)
        {
            o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  handshake ms: p50 {result.HandshakeP50Ms:0.0}, p99 {result.HandshakeP99Ms:0.0}, max {result.HandshakeMaxMs:0.0}"));
        }

        o.WriteLine($"  failures: {failures} (client {result.ClientFailures}, server {result.ServerFailures})");
        foreach (KeyValuePair<string, int> kind in result.FailureKinds.OrderByDescending(k => k.Value)) o.WriteLine($"    {kind.Value} x {kind.Key}");
        foreach (string message in result.FailureMessages) o.WriteLine($"    e.g. {message}");
        o.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  growth from {first.Seconds:0} s (after {warmup:0.#} s of warm-up) to {last.Seconds:0} s:"));
        o.WriteLine($"    rss      {Growth(first.RssBytes, last.RssBytes, MiB, "MiB")}");
        o.WriteLine($"    gc heap  {Growth(first.GcHeapBytes, last.GcHeapBytes, MiB, "MiB")}");
        o.WriteLine($"    threads  {Growth(first.Threads, last.Threads, 1, "")}");
        o.WriteLine($"    fds      {Growth(first.OpenFds, last.OpenFds, 1, "")}");
        o.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"  after disposing everything ({(socketsLeft > 0 ? $"{socketsLeft} SOCKETS STILL OPEN" : "sockets released")} {after.Seconds:0.0} s later, full GC): "
            + $"threads {after.Threads} (before the run {baseline.Threads}; the thread pool keeps its threads a while), fds {after.OpenFds} (before {baseline.OpenFds}), "
            + $"rss {after.RssBytes / MiB:0.0} MiB, gc heap {after.GcHeapBytes / MiB:0.0} MiB; server connections still open at the end: {serverConnectionsLeft}"));
        if (OperatingSystem.IsLinux()) o.WriteLine($"    open fds by kind: before {_baselineFdKinds}; after {FdKinds()}");
        bool ok = complete && failures == 0 && socketsLeft <= 0;
        o.WriteLine(ok ? "OK" : "FAILED");
        return ok ? 0 : 1;
    }

    private static string Growth(long from, long to, double unit, string unitName)
    {
        string u = unitName.Length == 0 ? "" : " " + unitName;
        double percent = from > 0 ? 100.0 * (to - from) / from : 0;
        return string.Create(CultureInfo.InvariantCulture, $"{from / unit:0.#}{u} -> {to / unit:0.#}{u} ({(to - from) / unit:+0.#;-0.#;0}{u}, {percent:+0.0;-0.0;0.0} %)");
    }

    /// <summary>Open sockets of the process (Linux; 0 elsewhere).</summary>
    private static int Sockets() => OperatingSystem.IsLinux() ? Directory.GetFileSystemEntries("/proc/self/fd").Count(fd => LinkTarget(fd)?.StartsWith("socket:", StringComparison.Ordinal) == true) : 0;

    private static string? LinkTarget(string fd)
    {
        try
        {
            return new FileInfo(fd).LinkTarget;
        }
        catch (IOException)
        {
            return null; // closed meanwhile
        }
    }

    /// <summary>The process's open file descriptors by what they are (socket, pipe, anon_inode:[eventpoll], file), Linux only.</summary>
    private static string FdKinds()
    {
        if (!OperatingSystem.IsLinux()) return "";
        var kinds = new SortedDictionary<string, int>(StringComparer.Ordinal);
        foreach (string fd in Directory.GetFileSystemEntries("/proc/self/fd"))
        {
            string? target = LinkTarget(fd);
            string kind = target is null ? "?" : target.StartsWith('/') ? "file" : target.Split(':')[0] is "anon_inode" ? target : target.Split(':')[0];
            kinds[kind] = kinds.GetValueOrDefault(kind) + 1;
        }

        return string.Join(", ", kinds.Select(k => $"{k.Key} {k.Value}"));
    }

    private static double Percentile(double[] sorted, double p) => sorted.Length == 0 ? 0 : sorted[Math.Min(sorted.Length - 1, (int)(p * sorted.Length))];
}

/// <summary>What --json writes.</summary>
public sealed class LoadResult
{
    public required string Mode { get; init; }

    public required string Provider { get; init; }

    public bool Complete { get; init; }

    public double ElapsedSeconds { get; init; }

    public long Connections { get; init; }

    public long Streams { get; init; }

    public long Bytes { get; init; }

    public double ConnectionsPerSecond { get; init; }

    public double StreamsPerSecond { get; init; }

    public double MiBPerSecond { get; init; }

    public double HandshakeP50Ms { get; init; }

    public double HandshakeP99Ms { get; init; }

    public double HandshakeMaxMs { get; init; }

    /// <summary>Median and 99th percentile of a stream's time from open to its complete response (timed window only).</summary>
    public double StreamP50Ms { get; init; }

    public double StreamP99Ms { get; init; }

    public long ClientFailures { get; init; }

    public long ServerFailures { get; init; }

    public required Dictionary<string, int> FailureKinds { get; init; }

    public required List<string> FailureMessages { get; init; }

    public double WarmupSeconds { get; init; }

    public required ResourceSample GrowthFrom { get; init; }

    public required ResourceSample GrowthTo { get; init; }

    public required ResourceSample Baseline { get; init; }

    public required ResourceSample AfterDispose { get; init; }

    public int ServerConnectionsLeftAtEnd { get; init; }

    /// <summary>Sockets still open once everything was disposed and the closing periods had 30 s to end (a leak when above 0).</summary>
    public int SocketsLeftAfterDispose { get; init; }

    public required IReadOnlyList<ResourceSample> Samples { get; init; }
}
