using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Net;
using System.Net.Quic.Managed;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>Which load QuicLoad runs.</summary>
public enum LoadMode
{
    /// <summary>N connections one after the other, one request/response stream each.</summary>
    Sequential,

    /// <summary>M connections at once, K streams at once on each.</summary>
    Concurrent,

    /// <summary>N streams on one connection, a bounded number in flight.</summary>
    Streams,

    /// <summary>C connections running request/response streams for T seconds (streams/s, throughput).</summary>
    Connections,

    /// <summary>T minutes of workers that connect, run a random number of streams of random sizes, and close.</summary>
    Soak,

    /// <summary>T seconds of workers that connect and close, a bounded number at a time: handshakes per second.</summary>
    Handshakes,

    /// <summary>A server alone on a given port (for tests with several server processes): echoes every stream until stdin ends.</summary>
    Serve,

    /// <summary>One busy connection's streams/s alone, then beside N idle connections; the idle connections' memory and CPU.</summary>
    Idle,

    /// <summary>The server in this process under a slow-reader flood from a client process; a well-behaved client meanwhile.</summary>
    SlowReader,

    /// <summary>The server in this process; a client process completes N handshakes, stays silent, closes: RSS and GC heap.</summary>
    Flood,

    /// <summary>The client process of slow-reader and flood (started by them, not listed in the help).</summary>
    AttackClient,
}

/// <summary>Command line of QuicLoad (System.CommandLine): one subcommand per mode, shared options on the root.</summary>
public sealed class LoadOptions
{
    private const string Description = """
        Load and soak runs over loopback: a server and its clients in this process, on one provider. Every second it
        prints progress and a sample of RSS, GC heap, threads and open file descriptors; at the end the totals, the
        failures, and the growth of each resource between the first sample after warm-up and the last one.
        Exit codes: 0 ok, 1 a failure (or the time limit stopped the run), 2 bad arguments or provider not available.
        """;

    public LoadMode Mode { get; private set; }

    /// <summary>sequential N, concurrent M, streams N, connections C, soak: the workers.</summary>
    public int Count { get; private set; }

    /// <summary>concurrent: K streams per connection.</summary>
    public int StreamsPerConnection { get; private set; } = 1;

    /// <summary>Bytes the server answers each stream with (soak: the largest, sizes are random up to it).</summary>
    public int ResponseSize { get; private set; }

    /// <summary>Bytes the client sends on each stream after the 8-byte request header.</summary>
    public int RequestSize { get; private set; }

    /// <summary>streams / connections / soak: streams in flight per connection.</summary>
    public int Parallel { get; private set; } = 1;

    /// <summary>connections: how long; soak: the minutes, in seconds.</summary>
    public double DurationSeconds { get; private set; }

    /// <summary>soak: a worker's connection is closed and replaced after this many streams (at most).</summary>
    public int Recycle { get; private set; } = 200;

    public QuicProvider Provider { get; private set; }

    /// <summary>--listener-sockets: the server's SO_REUSEPORT sockets, one driver each (managed provider; 0 = the default, 1).</summary>
    public int ListenerSockets { get; private set; }

    /// <summary>serve: the UDP port (0: any free port).</summary>
    public int Port { get; private set; }

    /// <summary>serve: sockets of the SO_REUSEPORT group spanning processes (0: this server's alone).</summary>
    public int ReusePortGroupSize { get; private set; }

    /// <summary>serve: the group index of this server's first socket.</summary>
    public int ReusePortGroupIndex { get; private set; }

    /// <summary>serve: every client goes through a Retry.</summary>
    public bool RequireRetry { get; private set; }

    /// <summary>serve: the fleet's stateless reset key (empty: random).</summary>
    public byte[] StatelessResetKey { get; private set; } = [];

    /// <summary>serve: the fleet's Retry and NEW_TOKEN key (empty: random).</summary>
    public byte[] TokenKey { get; private set; } = [];

    public bool IPv6 { get; private set; }

    /// <summary>slow-reader: the server's RSS growth over its baseline that fails the run.</summary>
    public long MaxGrowthBytes { get; private set; }

    /// <summary>attack-client: the server's address.</summary>
    public string? Target { get; private set; }

    /// <summary>attack-client: slow-reader or flood.</summary>
    public string Attack { get; private set; } = "";

    /// <summary>--cert rsa: the server's self-signed certificate has an RSA-2048 key instead of ECDSA P-256.</summary>
    public bool RsaCertificate { get; private set; }

    /// <summary>--json PATH ("-" = standard output instead of the text summary).</summary>
    public string? JsonPath { get; private set; }

    /// <summary>Bound on any one operation (connect, a stream's request/response, close).</summary>
    public double OperationTimeoutSeconds { get; private set; } = 30;

    /// <summary>Bound on the whole run (null: 900 s for the counted modes, the duration + 120 s for connections and soak).</summary>
    public double? MaxSeconds { get; private set; }

    /// <summary>The bound on the whole run in effect.</summary>
    public double TimeLimitSeconds => MaxSeconds ?? (Mode is LoadMode.Connections or LoadMode.Soak or LoadMode.Handshakes ? DurationSeconds + 120 : Mode == LoadMode.Idle ? 2 * DurationSeconds + 600 : 900);

    /// <summary>idle: seconds the process sits with every connection idle while its CPU time is measured.</summary>
    public double IdleSeconds { get; private set; } = 5;

    /// <summary>Seconds of warm-up the growth figures skip (null: a fifth of the run, at most 60 s).</summary>
    public double? WarmupSeconds { get; private set; }

    /// <summary>The root's --help text.</summary>
    public static string Usage => HelpText([]);

    /// <summary>The --help text of <paramref name="command"/> (empty: the root; else a mode).</summary>
    public static string HelpText(string[] command)
    {
        var text = new StringWriter();
        new LoadCommandLine(QuicProvider.Managed).Root.Parse([.. command, "--help"]).Invoke(new InvocationConfiguration { Output = text, Error = text });
        return text.ToString().TrimEnd();
    }

    /// <summary>The mode names, in the order of the help.</summary>
    public static IReadOnlyList<string> ModeNames { get; } = ["sequential", "concurrent", "streams", "connections", "soak", "handshakes", "serve", "idle", "slow-reader", "flood"];

    public static bool TryParse(string[] args, out LoadOptions options, out string error)
        => TryParse(args, QuicProviderSelection.Default, out options, out error);

    /// <summary>
    /// Parses <paramref name="args"/>; without --provider, <paramref name="libraryDefault"/> decides. False with an
    /// empty <paramref name="error"/> means --help was asked for.
    /// </summary>
    public static bool TryParse(string[] args, QuicProvider libraryDefault, out LoadOptions options, out string error)
    {
        var cli = new LoadCommandLine(libraryDefault);
        return cli.TryBind(cli.Root.Parse(args), out options, out error);
    }

    private sealed class LoadCommandLine
    {
        private readonly QuicProvider _defaultProvider;
        private readonly Dictionary<Command, LoadMode> _modes = [];
        private readonly Option<QuicProvider?> _provider;
        private readonly Option<bool> _ipv6 = new("--ipv6") { Description = "Loopback over IPv6 (::1) instead of IPv4 (127.0.0.1)." };
        private readonly Option<string?> _json = new("--json") { HelpName = "PATH", Description = "Also write the result (totals, failures, samples, growth) as JSON to PATH; '-' writes it to stdout (the progress and summary then go to stderr)." };
        private readonly Option<double> _timeout = Positive("--timeout", "S", "Seconds any one connect, stream or close may take before it counts as a failure.", 30);
        private readonly Option<double?> _maxSeconds = new("--max-seconds")
        {
            HelpName = "S",
            Description = "Stop the whole run after S seconds; what is unfinished then makes the run fail (default: 900, or T + 120 for connections, soak and handshakes).",
            CustomParser = r => double.TryParse(r.Tokens[0].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0 ? s : Error<double?>(r),
        };
        private readonly Option<double?> _warmup = new("--warmup")
        {
            HelpName = "S",
            Description = "Seconds the growth figures skip (default: a fifth of the run, at most 60).",
            CustomParser = r => double.TryParse(r.Tokens[0].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s >= 0 ? s : Error<double?>(r),
        };
        private readonly Option<int> _requestSize = Size("--request-size", "Bytes the client sends on each stream (after an 8-byte header).", 64);
        private readonly Option<string> _cert = new Option<string>("--cert")
        {
            HelpName = "ecdsa|rsa",
            Description = "Key type of the server's self-signed certificate: ECDSA P-256 or RSA-2048.",
            DefaultValueFactory = _ => "ecdsa",
        }.AcceptOnlyFromAmong("ecdsa", "rsa");
        private readonly Option<int> _listenerSockets = new("--listener-sockets")
        {
            HelpName = "N",
            Description = "The server's SO_REUSEPORT sockets on its port, one driver thread each (managed provider only; "
                + "QuicListenerOptions.ListenerSockets). Default: 1.",
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n is > 0 and <= 256 ? n : Error<int>(r),
        };

        // Per mode.
        private readonly Option<int> _size1K = Size("--size", "Bytes of each response.", 1024);
        private readonly Option<int> _size64K = Size("--size", "Bytes of each response.", 64 * 1024);
        private readonly Option<int> _soakSize = Size("--size", "Largest response; each stream draws its size uniformly from 0..N.", 64 * 1024);
        private readonly Option<int> _streamsParallel = Count("--parallel", "Streams in flight on the connection.", 100);
        private readonly Option<int> _connectionsParallel = Count("--parallel", "Streams in flight on each connection.", 1);
        private readonly Option<int> _soakParallel = Count("--parallel", "Streams in flight on each worker's connection.", 4);
        private readonly Option<double> _seconds = Positive("--seconds", "T", "How long the connections run streams.", 10);
        private readonly Option<int> _recycle = Count("--recycle", "A worker closes its connection and connects again after a random number of streams, 1..N.", 200);
        private readonly Argument<int> _sequentialCount = CountArgument("N", "Connections, one after the other.");
        private readonly Argument<int> _concurrentCount = CountArgument("M", "Connections at once.");
        private readonly Argument<int> _concurrentStreams = CountArgument("K", "Streams at once on each connection.");
        private readonly Argument<int> _streamsCount = CountArgument("N", "Streams on the one connection.");
        private readonly Argument<int> _connectionsCount = CountArgument("C", "Client connections.");
        private readonly Argument<double> _soakMinutes = new("T")
        {
            Description = "Minutes.",
            CustomParser = r => double.TryParse(r.Tokens[0].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out double m) && m > 0 ? m : Error<double>(r),
        };
        private readonly Option<int> _workers = Count("--workers", "Workers, each with one connection at a time.", 8);
        private readonly Argument<double> _handshakeSeconds = new("T")
        {
            Description = "Seconds.",
            CustomParser = r => double.TryParse(r.Tokens[0].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0 ? s : Error<double>(r),
        };
        private readonly Option<int> _handshakesParallel = Count("--parallel", "Connections being set up at a time.", 16);
        private readonly Argument<int> _idleCount = new("N")
        {
            Description = "Idle connections (0 allowed: the busy connection alone, twice).",
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n <= 100_000 ? n : Error<int>(r),
        };
        private readonly Option<double> _idleSeconds = Positive("--idle-seconds", "S", "Seconds with every connection idle, for the CPU figure.", 5);
        private readonly Option<int> _idleParallel = Count("--parallel", "Idle connections being set up at a time.", 32);
        private readonly Option<int> _port = new("--port")
        {
            HelpName = "N",
            Description = "UDP port on the loopback address (0: any free port).",
            DefaultValueFactory = _ => 0,
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n <= 65535 ? n : Error<int>(r),
        };
        private readonly Option<int> _groupSize = new("--reuseport-group-size")
        {
            HelpName = "G",
            Description = "Sockets of the SO_REUSEPORT group on the port, all processes together (QuicListenerOptions.ReusePortGroupSize; "
                + "start the processes in the order of their --reuseport-group-index).",
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n <= 256 ? n : Error<int>(r),
        };
        private readonly Option<int> _groupIndex = new("--reuseport-group-index")
        {
            HelpName = "I",
            Description = "The group index of this server's first socket (QuicListenerOptions.ReusePortGroupIndex).",
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n < 256 ? n : Error<int>(r),
        };
        private readonly Option<bool> _requireRetry = new("--require-retry") { Description = "Send every client a Retry first (QuicListenerOptions.RequireRetry)." };
        private readonly Option<byte[]> _resetKey = HexKey("--stateless-reset-key", "The fleet's stateless reset key, at least 16 bytes in hex (QuicListenerOptions.StatelessResetKey).");
        private readonly Option<byte[]> _tokenKey = HexKey("--token-key", "The fleet's Retry and NEW_TOKEN token key, at least 16 bytes in hex (QuicListenerOptions.AddressValidationTokenKey).");
        private readonly Option<int> _attackConnections = Count("--connections", "Attacking connections.", 10);
        private readonly Option<int> _attackStreams = Count("--streams", "Streams each attacking connection opens (the server allows as many).", 1000);
        private readonly Option<int> _attackSize = Size("--size", "Bytes of the response each attacking stream asks for.", 1 << 20);
        private readonly Option<double> _attackSeconds = Positive("--seconds", "T", "How long the attack holds (the well-behaved client runs halfway).", 10);
        private readonly Option<int> _maxGrowth = Size("--max-growth", "Server RSS growth over its baseline that fails the run.", 64 << 20);
        private readonly Argument<int> _floodCount = CountArgument("N", "Connections.");
        private readonly Option<int> _floodParallel = Count("--parallel", "Handshakes in progress at a time.", 64);
        private readonly Argument<string> _target = new("ADDRESS") { Description = "The server's address and port." };
        private readonly Option<string> _attackKind = new Option<string>("--attack") { Description = "slow-reader or flood.", DefaultValueFactory = _ => "slow-reader" }
            .AcceptOnlyFromAmong("slow-reader", "flood");
        private readonly Option<int> _clientConnections = Count("--connections", "Connections.", 10);
        private readonly Option<int> _clientStreams = Count("--streams", "Streams per connection.", 1000);
        private readonly Option<int> _clientSize = Size("--size", "Response size asked for.", 1 << 20);
        private readonly Option<double> _clientSeconds = Positive("--seconds", "T", "How long the attack holds.", 10);
        private readonly Option<int> _clientParallel = Count("--parallel", "Handshakes at a time.", 64);

        public LoadCommandLine(QuicProvider defaultProvider)
        {
            _defaultProvider = defaultProvider;
            _provider = new Option<QuicProvider?>("--provider")
            {
                HelpName = "managed|msquic",
                Description = "The library's provider for both ends (msquic needs libmsquic). Default: the library's selection "
                    + $"(DOTNET_SYSTEM_NET_QUIC_PROVIDER; here: {Name(defaultProvider)}).",
                CustomParser = r => r.Tokens[0].Value switch
                {
                    "managed" => QuicProvider.Managed,
                    "msquic" => QuicProvider.MsQuic,
                    string v => Error<QuicProvider?>(r, $"unknown provider '{v}'"),
                },
                Recursive = true,
            };
            foreach (Option shared in new Option[] { _ipv6, _json, _timeout, _maxSeconds, _warmup, _requestSize, _listenerSockets, _cert })
            {
                shared.Recursive = true;
            }

            Root = new Command("QuicLoad", Description) { _provider, _ipv6, _json, _timeout, _maxSeconds, _warmup, _requestSize, _listenerSockets, _cert };
            Add(LoadMode.Sequential, new Command("sequential", "N connections one after the other: connect, one request/response stream, close.") { _sequentialCount, _size1K });
            Add(LoadMode.Concurrent, new Command("concurrent", "M connections at once, each with K streams at once.") { _concurrentCount, _concurrentStreams, _size64K });
            Add(LoadMode.Streams, new Command("streams", "N request/response streams on one connection.") { _streamsCount, _size1K, _streamsParallel });
            Add(LoadMode.Connections, new Command("connections", "C connections in this process running request/response streams for T seconds: streams/s and throughput, and what one stream cost over those T seconds, client and server together (bytes allocated, CPU time, datagrams sent on the managed provider).")
            {
                _connectionsCount, _size64K, _connectionsParallel, _seconds,
            });
            Add(LoadMode.Soak, new Command("soak", "T minutes of workers that connect, run a random number of streams of random sizes, close, and connect again.")
            {
                _soakMinutes, _soakSize, _soakParallel, _workers, _recycle,
            });
            Add(LoadMode.Handshakes, new Command("handshakes", "T seconds of connections that connect and close, N being set up at a time: handshakes per second.")
            {
                _handshakeSeconds, _handshakesParallel,
            });
            Add(LoadMode.Serve, new Command("serve", "A server alone, for tests with several server processes on one port: prints 'listening <address>', "
                + "opens a unidirectional stream on each connection with its 4-byte group index, echoes every bidirectional stream; when "
                + "stdin ends, prints 'served <C> connections <S> streams <B> bytes' and exits.")
            {
                _port, _groupSize, _groupIndex, _requireRetry, _resetKey, _tokenKey,
            });
            Add(LoadMode.Idle, new Command("idle", "One busy connection warms up (one-second slices until two in a row are within 5 %), then runs request/response streams for T seconds alone; then N idle connections "
                + "(handshake, nothing sent) are set up and the process sits idle for --idle-seconds (memory per idle connection; "
                + "the process's CPU with the 1 s sampler paused, and the share of QuicManaged's own threads); then the busy connection runs T seconds again beside them: streams/s before and after, and their ratio.")
            {
                _idleCount, _size64K, _seconds, _idleSeconds, _idleParallel,
            });
            Add(LoadMode.SlowReader, new Command("slow-reader", "The server in this process, a client process attacking it: C connections advertise 2,048-byte "
                + "stream and 256 KiB connection windows, open N streams each asking for a response of --size bytes, and never read. A "
                + "well-behaved client downloads 32 MiB before and during the attack. Prints the server's RSS and GC heap; fails when its "
                + "RSS grew by --max-growth or more. --provider is the server's; the clients are always managed.")
            {
                _attackConnections, _attackStreams, _attackSize, _attackSeconds, _maxGrowth,
            });
            Add(LoadMode.Flood, new Command("flood", "The server in this process, a client process that completes N handshakes, stays silent, then "
                + "closes them all: the server's RSS and GC heap at its baseline, with all N open, and after they ended and a forced full "
                + "collection. --provider is the server's; the clients are always managed.")
            {
                _floodCount, _floodParallel,
            });
            Add(LoadMode.AttackClient, new Command("attack-client", "The client process of slow-reader and flood.")
            {
                _target, _attackKind, _clientConnections, _clientStreams, _clientSize, _clientSeconds, _clientParallel,
            });
            Root.Subcommands[^1].Hidden = true;
            Root.Add(new System.CommandLine.Help.HelpOption { Recursive = true });
            foreach (Option option in Root.Options)
            {
                if (option.Action is System.CommandLine.Help.HelpAction help) help.MaxWidth = 120;
            }
        }

        public Command Root { get; }

        private void Add(LoadMode mode, Command command)
        {
            _modes.Add(command, mode);
            Root.Add(command);
        }

        public bool TryBind(ParseResult result, out LoadOptions options, out string error)
        {
            options = new LoadOptions();
            error = "";
            if (result.Action is System.CommandLine.Help.HelpAction) return false;
            if (result.Errors.Count > 0)
            {
                error = result.Errors[0].Message;
                return false;
            }

            if (!_modes.TryGetValue(result.CommandResult.Command, out LoadMode mode))
            {
                error = "a mode is required: " + string.Join(", ", ModeNames);
                return false;
            }

            options.Mode = mode;
            options.Provider = result.GetValue(_provider) ?? _defaultProvider;
            options.IPv6 = result.GetValue(_ipv6);
            options.RsaCertificate = result.GetValue(_cert) == "rsa";
            options.JsonPath = result.GetValue(_json);
            options.OperationTimeoutSeconds = result.GetValue(_timeout);
            options.MaxSeconds = result.GetValue(_maxSeconds);
            options.WarmupSeconds = result.GetValue(_warmup);
            options.RequestSize = result.GetValue(_requestSize);
            options.ListenerSockets = result.GetValue(_listenerSockets);
            if (options.ListenerSockets > 0 && options.Provider == QuicProvider.MsQuic)
            {
                error = "--listener-sockets is a managed provider option (msquic partitions by itself)";
                return false;
            }

            switch (mode)
            {
                case LoadMode.Sequential:
                    options.Count = result.GetValue(_sequentialCount);
                    options.ResponseSize = result.GetValue(_size1K);
                    break;
                case LoadMode.Concurrent:
                    options.Count = result.GetValue(_concurrentCount);
                    options.StreamsPerConnection = result.GetValue(_concurrentStreams);
                    options.ResponseSize = result.GetValue(_size64K);
                    options.Parallel = options.StreamsPerConnection;
                    break;
                case LoadMode.Streams:
                    options.Count = result.GetValue(_streamsCount);
                    options.ResponseSize = result.GetValue(_size1K);
                    options.Parallel = result.GetValue(_streamsParallel);
                    break;
                case LoadMode.Connections:
                    options.Count = result.GetValue(_connectionsCount);
                    options.ResponseSize = result.GetValue(_size64K);
                    options.Parallel = result.GetValue(_connectionsParallel);
                    options.DurationSeconds = result.GetValue(_seconds);
                    break;
                case LoadMode.Soak:
                    options.DurationSeconds = result.GetValue(_soakMinutes) * 60;
                    options.ResponseSize = result.GetValue(_soakSize);
                    options.Parallel = result.GetValue(_soakParallel);
                    options.Count = result.GetValue(_workers);
                    options.Recycle = result.GetValue(_recycle);
                    break;
                case LoadMode.Idle:
                    options.Count = result.GetValue(_idleCount);
                    options.ResponseSize = result.GetValue(_size64K);
                    options.DurationSeconds = result.GetValue(_seconds);
                    options.IdleSeconds = result.GetValue(_idleSeconds);
                    options.Parallel = result.GetValue(_idleParallel);
                    break;
                case LoadMode.Handshakes:
                    options.DurationSeconds = result.GetValue(_handshakeSeconds);
                    options.Parallel = result.GetValue(_handshakesParallel);
                    options.Count = options.Parallel;
                    break;
                case LoadMode.SlowReader:
                    options.Count = result.GetValue(_attackConnections);
                    options.StreamsPerConnection = result.GetValue(_attackStreams);
                    options.Parallel = options.StreamsPerConnection; // the server allows that many streams per connection
                    options.ResponseSize = result.GetValue(_attackSize);
                    options.DurationSeconds = result.GetValue(_attackSeconds);
                    options.MaxGrowthBytes = result.GetValue(_maxGrowth);
                    break;
                case LoadMode.Flood:
                    options.Count = result.GetValue(_floodCount);
                    options.Parallel = result.GetValue(_floodParallel);
                    break;
                case LoadMode.AttackClient:
                    options.Target = result.GetValue(_target);
                    if (!IPEndPoint.TryParse(options.Target ?? "", out _))
                    {
                        error = $"bad address '{options.Target}'";
                        return false;
                    }

                    options.Attack = result.GetValue(_attackKind) ?? "slow-reader";
                    options.Count = result.GetValue(_clientConnections);
                    options.StreamsPerConnection = result.GetValue(_clientStreams);
                    options.ResponseSize = result.GetValue(_clientSize);
                    options.DurationSeconds = result.GetValue(_clientSeconds);
                    options.Parallel = result.GetValue(_clientParallel);
                    break;
                case LoadMode.Serve:
                    options.Port = result.GetValue(_port);
                    options.ReusePortGroupSize = result.GetValue(_groupSize);
                    options.ReusePortGroupIndex = result.GetValue(_groupIndex);
                    options.RequireRetry = result.GetValue(_requireRetry);
                    options.StatelessResetKey = result.GetValue(_resetKey) ?? [];
                    options.TokenKey = result.GetValue(_tokenKey) ?? [];
                    if (options.Provider == QuicProvider.MsQuic)
                    {
                        error = "serve runs on the managed provider only";
                        return false;
                    }

                    break;
            }

            return true;
        }

        private static Option<int> Size(string name, string description, int defaultValue) => new(name)
        {
            HelpName = "N[K|M]",
            Description = description,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = r => TryParseSize(r.Tokens[0].Value, out int n) ? n : Error<int>(r),
        };

        private static Option<int> Count(string name, string description, int defaultValue) => new(name)
        {
            HelpName = "N",
            Description = description,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0 ? n : Error<int>(r),
        };

        private static Option<byte[]> HexKey(string name, string description) => new(name)
        {
            HelpName = "HEX",
            Description = description,
            CustomParser = r =>
            {
                try
                {
                    byte[] key = Convert.FromHexString(r.Tokens[0].Value);
                    return key.Length >= 16 ? key : Error<byte[]>(r);
                }
                catch (FormatException)
                {
                    return Error<byte[]>(r);
                }
            },
        };

        private static Argument<int> CountArgument(string name, string description) => new(name)
        {
            Description = description,
            CustomParser = r => int.TryParse(r.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0 ? n : Error<int>(r),
        };

        private static Option<double> Positive(string name, string helpName, string description, double defaultValue) => new(name)
        {
            HelpName = helpName,
            Description = description,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = r => double.TryParse(r.Tokens[0].Value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0 ? s : Error<double>(r),
        };

        private static T Error<T>(ArgumentResult result, string? message = null)
        {
            string what = result.Parent is OptionResult o ? o.IdentifierToken?.Value ?? "" : result.Argument.Name;
            result.AddError(message ?? $"bad value '{result.Tokens[0].Value}' for {what}");
            return default!;
        }
    }

    /// <summary>The provider's name on the command line.</summary>
    public static string Name(QuicProvider provider) => provider == QuicProvider.MsQuic ? "msquic" : "managed";

    private static bool TryParseSize(string text, out int bytes)
    {
        bytes = 0;
        if (text.Length == 0) return false;
        int shift = char.ToUpperInvariant(text[^1]) switch { 'K' => 10, 'M' => 20, _ => 0 };
        if (shift != 0) text = text[..^1];
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || (n << shift) > 1L << 30) return false;
        bytes = (int)(n << shift);
        return true;
    }
}
