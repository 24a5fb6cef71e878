using System.Globalization;
using System.Net.Security;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>Command line of QuicPerf.</summary>
public sealed class PerfOptions
{
    public const string Usage = """
        usage: QuicPerf [--seconds N] [--bytes N[K|M|G]] [--streams N] [--provider managed|msquic|tcp-tls]
                        [--ipv6] [--cipher aes128|aes256|chacha20] [--cert ecdsa|rsa] [--window N[K|M]]
          Loopback transfer (download: the server sends, the client counts) between a client and a server in
          this process. Default: 5 seconds, 1 stream, managed provider, IPv4, the stack's default cipher.
          --bytes N        transfer N bytes in total (split over the streams) instead of running for --seconds
          --streams N      parallel streams on one connection (tcp-tls: N connections)
          --window N       QUIC stream receive window, a power of 2 (default 16M)
        exit codes: 0 ok, 1 bad arguments or transfer failed, 2 provider not available here (reason printed)
        """;

    public double Seconds { get; private set; } = 5;

    public long? Bytes { get; private set; }

    public int Streams { get; private set; } = 1;

    public PerfTransportKind Provider { get; private set; } = PerfTransportKind.Managed;

    public bool IPv6 { get; private set; }

    public TlsCipherSuite? Cipher { get; private set; }

    public bool RsaCertificate { get; private set; }

    public int StreamWindow { get; private set; } = 16 * 1024 * 1024;

    public static bool TryParse(string[] args, out PerfOptions options, out string error)
    {
        options = new PerfOptions();
        error = "";
        for (int i = 0; i < args.Length; i++)
        {
            string arg = args[i];
            string? value = i + 1 < args.Length ? args[i + 1] : null;
            switch (arg)
            {
                case "--seconds" when value is not null && double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0:
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
                        case "msquic": options.Provider = PerfTransportKind.MsQuic; break;
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
                    error = value is null || !arg.StartsWith("--", StringComparison.Ordinal)
                        ? $"unexpected argument '{arg}'"
                        : $"bad value '{value}' for {arg}";
                    return false;
            }
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
