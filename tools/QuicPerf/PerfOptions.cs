using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Net.Security;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>Command line of QuicPerf (System.CommandLine).</summary>
public sealed class PerfOptions
{
    private const string Description = """
        Throughput of a QUIC download (the server sends, the client counts). With neither -s nor -c: a loopback
        transfer between a client and a server in this process, over IPv4 and the library's provider (managed unless
        DOTNET_SYSTEM_NET_QUIC_PROVIDER=msquic or the System.Net.Quic.Managed.Provider switch says so).
        Exit codes: 0 ok, 1 bad arguments or transfer failed, 2 provider not available here (reason printed).
        """;

    public double Seconds { get; private set; } = 10;

    /// <summary>Whole seconds at the start of a timed download left out of every figure (iperf3's --omit).</summary>
    public int OmitSeconds { get; private set; }

    /// <summary>-s: serve until stopped.</summary>
    public bool Server { get; private set; }

    /// <summary>-c HOST: the server to download from (null: loopback in this process).</summary>
    public string? ClientOf { get; private set; }

    public int Port { get; private set; } = 18080;

    public long? Bytes { get; private set; }

    public int Streams { get; private set; } = 1;

    /// <summary>--provider, else the library's own process default (QuicProvider selection).</summary>
    public PerfTransportKind Provider { get; private set; }

    public bool IPv6 { get; private set; }

    public TlsCipherSuite? Cipher { get; private set; }

    public bool RsaCertificate { get; private set; }

    public int StreamWindow { get; private set; } = 16 * 1024 * 1024;

    public int MaxDatagram { get; private set; }

    /// <summary>The full --help text (with the library's current default provider).</summary>
    public static string Usage => UsageFor(System.Net.Quic.Managed.QuicProviderSelection.Default);

    /// <summary>The full --help text when the library's default provider is <paramref name="libraryDefault"/>.</summary>
    public static string UsageFor(System.Net.Quic.Managed.QuicProvider libraryDefault) => new PerfCommandLine(libraryDefault).HelpText();

    public static bool TryParse(string[] args, out PerfOptions options, out string error)
        => TryParse(args, System.Net.Quic.Managed.QuicProviderSelection.Default, out options, out error);

    /// <summary>
    /// Parses <paramref name="args"/>; without --provider, <paramref name="libraryDefault"/> decides. False with an
    /// empty <paramref name="error"/> means --help was asked for.
    /// </summary>
    public static bool TryParse(string[] args, System.Net.Quic.Managed.QuicProvider libraryDefault, out PerfOptions options, out string error)
    {
        var cli = new PerfCommandLine(libraryDefault);
        return cli.TryBind(cli.Root.Parse(args), out options, out error);
    }

    /// <summary>The System.CommandLine definition: every option with its aliases, default, description and validation.</summary>
    internal sealed class PerfCommandLine
    {
        public PerfCommandLine(System.Net.Quic.Managed.QuicProvider libraryDefault)
        {
            PerfTransportKind defaultKind = _defaultKind = PerfTransport.FromLibraryProvider(libraryDefault);
            ServerOption = new Option<bool>("-s") { Description = "Run a server on PORT (all addresses) until Ctrl-C." };
            ClientOption = new Option<string?>("-c")
            {
                HelpName = "HOST",
                Description = "Run a client against a QuicPerf server on HOST:PORT (name or address).",
                CustomParser = r => Value(r, v => v.StartsWith('-') ? null : v),
            };
            PortOption = new Option<int>("--port", "-p")
            {
                HelpName = "N",
                Description = "Server port for -s/-c (qperf's default).",
                DefaultValueFactory = _ => 18080,
                CustomParser = r => Value(r, v => int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out int p) && p is > 0 and <= 65535 ? p : (int?)null),
            };
            SecondsOption = new Option<double>("--seconds", "-t")
            {
                HelpName = "N",
                Description = "Duration of the download in seconds.",
                DefaultValueFactory = _ => 10,
                CustomParser = r => Value(r, v => double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0 ? s : (double?)null),
            };
            OmitOption = new Option<int>("--omit", "-O")
            {
                HelpName = "N",
                Description = "Download N more seconds first and leave them out of every figure (like iperf3 -O): the JIT's " +
                    "tiering of the data path and slow start then fall outside the measured -t seconds.",
                DefaultValueFactory = _ => 0,
                CustomParser = r => Value(r, v => int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out int o) && o <= 600 ? o : (int?)null),
            };
            BytesOption = new Option<long?>("--bytes")
            {
                HelpName = "N[K|M|G]",
                Description = "Transfer N bytes in total (split over the streams) instead of running for -t.",
                CustomParser = r => Value(r, v => TryParseSize(v, out long b) && b > 0 ? b : (long?)null),
            };
            StreamsOption = new Option<int>("--streams")
            {
                HelpName = "N",
                Description = "Parallel streams on one connection, 1..1000 (tcp-tls: N connections).",
                DefaultValueFactory = _ => 1,
                CustomParser = r => Value(r, v => int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n is > 0 and <= 1000 ? n : (int?)null),
            };
            WindowOption = new Option<int>("--window")
            {
                HelpName = "N[K|M]",
                Description = "QUIC stream receive window in bytes, a power of 2 from 1K to 1G (default 16M).",
                DefaultValueFactory = _ => 16 * 1024 * 1024,
                CustomParser = r => Value(r, v => TryParseSize(v, out long w) && w is >= 1024 and <= 1L << 30 && (w & (w - 1)) == 0 ? (int)w : (int?)null),
            };
            MaxDatagramOption = new Option<int>("--max-datagram")
            {
                HelpName = "N",
                Description = "managed: the largest UDP payload path MTU discovery probes for, 1200..65527 (QuicConnectionOptions.MaxPathDatagramSize; "
                    + "default 0: 16000 on loopback, 1452 elsewhere). 1472 holds it to what msquic sends over IPv4 (1452 over IPv6): msquic probes up to 1500-byte IP packets "
                    + "and no further. The msquic providers ignore it.",
                DefaultValueFactory = _ => 0,
                CustomParser = r => Value(r, v => int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && (n == 0 || n is >= 1200 and <= 65527) ? n : (int?)null),
            };
            ProviderOption = new Option<PerfTransportKind?>("--provider")
            {
                HelpName = "managed|msquic|msquic-direct|tcp-tls",
                Description = "managed / msquic: this library's public API on that provider (QuicProvider); msquic-direct: "
                    + "System.Net.Quic itself, bypassing the library; tcp-tls (or tcp, ssl): SslStream over TCP. "
                    + $"Default: the library's provider selection (here: {PerfTransport.DisplayName(defaultKind)}).",
                CustomParser = r => Value(
                    r,
                    v => v switch
                    {
                        "managed" => PerfTransportKind.Managed,
                        "msquic" => PerfTransportKind.LibraryMsQuic,
                        "msquic-direct" => PerfTransportKind.MsQuic,
                        "tcp-tls" or "tcp" or "ssl" => PerfTransportKind.TcpTls,
                        _ => (PerfTransportKind?)null,
                    },
                    v => $"unknown provider '{v}'"),
            };
            IPv6Option = new Option<bool>("--ipv6") { Description = "Loopback over IPv6 (::1) instead of IPv4." };
            CipherOption = new Option<TlsCipherSuite?>("--cipher")
            {
                HelpName = "aes128|aes256|chacha20",
                Description = "Offer only this TLS 1.3 cipher suite on both ends (default: the platform's list).",
                CustomParser = r => Value(
                    r,
                    v => v switch
                    {
                        "aes128" => TlsCipherSuite.TLS_AES_128_GCM_SHA256,
                        "aes256" => TlsCipherSuite.TLS_AES_256_GCM_SHA384,
                        "chacha20" => TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
                        _ => (TlsCipherSuite?)null,
                    },
                    v => $"unknown cipher '{v}'"),
            };
            CertOption = new Option<string>("--cert")
            {
                HelpName = "ecdsa|rsa",
                Description = "Key type of the self-signed server certificate.",
                DefaultValueFactory = _ => "ecdsa",
            };
            CertOption.AcceptOnlyFromAmong("ecdsa", "rsa");

            Root = new Command("QuicPerf", Description)
            {
                ServerOption, ClientOption, PortOption, SecondsOption, OmitOption, BytesOption, StreamsOption, WindowOption,
                MaxDatagramOption, ProviderOption, IPv6Option, CipherOption, CertOption,
                new System.CommandLine.Help.HelpOption { Recursive = true },
            };
            foreach (Option option in Root.Options)
            {
                if (option.Action is System.CommandLine.Help.HelpAction help) help.MaxWidth = 120;
            }

            Root.Validators.Add(r =>
            {
                if (r.GetResult(ServerOption) is { Implicit: false } && r.GetResult(ClientOption) is { Implicit: false })
                {
                    r.AddError("-s and -c exclude each other");
                }
            });
        }

        private readonly PerfTransportKind _defaultKind;

        public Command Root { get; }

        public Option<bool> ServerOption { get; }

        public Option<string?> ClientOption { get; }

        public Option<int> PortOption { get; }

        public Option<double> SecondsOption { get; }

        public Option<int> OmitOption { get; }

        public Option<long?> BytesOption { get; }

        public Option<int> StreamsOption { get; }

        public Option<int> WindowOption { get; }

        public Option<int> MaxDatagramOption { get; }

        public Option<PerfTransportKind?> ProviderOption { get; }

        public Option<bool> IPv6Option { get; }

        public Option<TlsCipherSuite?> CipherOption { get; }

        public Option<string> CertOption { get; }

        public string HelpText()
        {
            var text = new StringWriter();
            Root.Parse(["--help"]).Invoke(new InvocationConfiguration { Output = text, Error = text });
            return text.ToString().TrimEnd();
        }

        public bool TryBind(ParseResult result, out PerfOptions options, out string error)
        {
            options = new PerfOptions();
            error = "";
            if (result.Action is System.CommandLine.Help.HelpAction) return false;
            if (result.Errors.Count > 0)
            {
                error = result.Errors[0].Message;
                return false;
            }

            options.Server = result.GetValue(ServerOption);
            options.ClientOf = result.GetValue(ClientOption);
            options.Port = result.GetValue(PortOption);
            options.Seconds = result.GetValue(SecondsOption);
            options.Bytes = result.GetValue(BytesOption);
            options.OmitSeconds = result.GetValue(OmitOption);
            if (options.OmitSeconds > 0 && options.Bytes is not null)
            {
                error = "--omit applies to a timed download (-t), not to --bytes";
                return false;
            }
            options.Streams = result.GetValue(StreamsOption);
            options.StreamWindow = result.GetValue(WindowOption);
            options.MaxDatagram = result.GetValue(MaxDatagramOption);
            options.Provider = result.GetValue(ProviderOption) ?? _defaultKind;
            options.IPv6 = result.GetValue(IPv6Option);
            options.Cipher = result.GetValue(CipherOption);
            options.RsaCertificate = result.GetValue(CertOption) == "rsa";
            return true;
        }

        /// <summary>Converts the option's single token with <paramref name="convert"/>; null from it is a "bad value" error.</summary>
        private static T Value<T>(ArgumentResult result, Func<string, T?> convert, Func<string, string>? message = null)
            where T : struct
        {
            string token = result.Tokens[0].Value;
            if (convert(token) is { } value) return value;
            result.AddError(message?.Invoke(token) ?? $"bad value '{token}' for {((OptionResult)result.Parent!).IdentifierToken?.Value}");
            return default;
        }

        private static string? Value(ArgumentResult result, Func<string, string?> convert)
        {
            string token = result.Tokens[0].Value;
            if (convert(token) is { } value) return value;
            result.AddError($"bad value '{token}' for {((OptionResult)result.Parent!).IdentifierToken?.Value}");
            return null;
        }
    }

    private static bool TryParseSize(string text, out long bytes)
    {
        bytes = 0;
        if (text.Length == 0) return false;
        long multiplier = 1;
        char last = char.ToUpperInvariant(text[^1]);
        if (last is 'K' or 'M' or 'G')
        {
            multiplier = last switch { 'K' => 1L << 10, 'M' => 1L << 20, _ => 1L << 30 };
            text = text[..^1];
        }

        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n > long.MaxValue / multiplier) return false;
        bytes = n * multiplier;
        return true;
    }
}
