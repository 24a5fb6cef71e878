using System.Globalization;
using System.Net.Security;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>Command line of QuicPerf.</summary>
public sealed class PerfOptions
{
    public const string Usage = """
        usage: QuicPerf [-s | -c HOST] [-p PORT] [-t SECONDS] [--bytes N[K|M|G]] [--streams N]
                        [--provider managed|msquic|msquic-direct|tcp-tls] [--ipv6] [--cipher aes128|aes256|chacha20] [--cert ecdsa|rsa]
                        [--window N[K|M]]
          With neither -s nor -c: a loopback transfer (download: the server sends, the client counts) between a
          client and a server in this process. Default: 10 seconds, 1 stream, IPv4, and the library's provider
          (managed unless DOTNET_SYSTEM_NET_QUIC_PROVIDER=msquic or the System.Net.Quic.Managed.Provider switch says so).
          --provider       managed / msquic: this library's public API on that provider (QuicProvider); msquic-direct:
                           System.Net.Quic itself, bypassing the library; tcp-tls: SslStream over TCP
          -s               run a server on PORT (all addresses) until Ctrl-C
          -c HOST          run a client against a QuicPerf server on HOST:PORT (name or address)
          -p, --port N     server port for -s/-c (default 18080, qperf's)
          -t, --seconds N  duration of the download (default 10)
          --bytes N        transfer N bytes in total (split over the streams) instead of running for -t
          --streams N      parallel streams on one connection (tcp-tls: N connections)
          --window N       QUIC stream receive window, a power of 2 (default 16M)
        exit codes: 0 ok, 1 bad arguments or transfer failed, 2 provider not available here (reason printed)
        """;

    public double Seconds { get; private set; } = 10;

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

    public static bool TryParse(string[] args, out PerfOptions options, out string error)
        => TryParse(args, System.Net.Quic.Managed.QuicProviderSelection.Default, out options, out error);

    /// <summary>Parses <paramref name="args"/>; without --provider, <paramref name="libraryDefault"/> decides.</summary>
    public static bool TryParse(string[] args, System.Net.Quic.Managed.QuicProvider libraryDefault, out PerfOptions options, out string error)
    {
        options = new PerfOptions { Provider = PerfTransport.FromLibraryProvider(libraryDefault) };
        error = "";
        for (int i = 0; i < args.Length; i++)
        {
            string arg = args[i];
            string? value = i + 1 < args.Length ? args[i + 1] : null;
            switch (arg)
            {
                case "-s":
                    options.Server = true;
                    break;
                case "-c" when value is not null && !value.StartsWith('-'):
                    options.ClientOf = value;
                    i++;
                    break;
                case "-p" or "--port" when value is not null && int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port is > 0 and <= 65535:
                    options.Port = port;
                    i++;
                    break;
                case "-t" or "--seconds" when value is not null && double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0:
                    options.Seconds = s;
                    i++;
                    break;
                case "--bytes" when value is not null && TryParseSize(value, out long b) && b > 0:
                    options.Bytes = b;
                    i++;
                    break;
                case "--streams" when value is not null && int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n is > 0 and <= 1000:
                    options.Streams = n;
                    i++;
                    break;
                case "--window" when value is not null && TryParseSize(value, out long w) && w is >= 1024 and <= 1L << 30 && (w & (w - 1)) == 0:
                    options.StreamWindow = (int)w;
                    i++;
                    break;
                case "--provider" when value is not null:
                    switch (value)
                    {
                        case "managed": options.Provider = PerfTransportKind.Managed; break;
                        case "msquic": options.Provider = PerfTransportKind.LibraryMsQuic; break;
                        case "msquic-direct": options.Provider = PerfTransportKind.MsQuic; break;
                        case "tcp-tls" or "tcp" or "ssl": options.Provider = PerfTransportKind.TcpTls; break;
                        default: error = $"unknown provider '{value}'"; return false;
                    }
                    i++;
                    break;
                case "--cipher" when value is not null:
                    switch (value)
                    {
                        case "aes128": options.Cipher = TlsCipherSuite.TLS_AES_128_GCM_SHA256; break;
                        case "aes256": options.Cipher = TlsCipherSuite.TLS_AES_256_GCM_SHA384; break;
                        case "chacha20": options.Cipher = TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256; break;
                        default: error = $"unknown cipher '{value}'"; return false;
                    }
                    i++;
                    break;
                case "--cert" when value is "ecdsa" or "rsa":
                    options.RsaCertificate = value == "rsa";
                    i++;
                    break;
                case "--ipv6":
                    options.IPv6 = true;
                    break;
                case "-h" or "--help":
                    error = "";
                    return false;
                default:
                    error = value is null || !arg.StartsWith("-", StringComparison.Ordinal)
                        ? $"unexpected argument '{arg}'"
                        : $"bad value '{value}' for {arg}";
                    return false;
            }
        }
        if (options.Server && options.ClientOf is not null)
        {
            error = "-s and -c exclude each other";
            return false;
        }
        return true;
    }

    private static bool TryParseSize(string text, out long bytes)
    {
        long multiplier = 1;
        char last = char.ToUpperInvariant(text[^1]);
        if (last is 'K' or 'M' or 'G')
        {
            multiplier = last switch { 'K' => 1L << 10, 'M' => 1L << 20, _ => 1L << 30 };
            text = text[..^1];
        }
        bytes = 0;
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n > long.MaxValue / multiplier) return false;
        bytes = n * multiplier;
        return true;
    }
}
