using System.Globalization;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Parsed command line. Exactly one input (--hex, --file, --sample, --pcap, --nettrace, --pid) is required.</summary>
internal sealed class DumperArguments
{
    public const string Usage = """
        usage: DatagramDumper <input> [options]
        inputs (exactly one):
          --hex HEX          one datagram as hex
          --file PATH        hex datagrams, one per line ('#' starts a comment); with --binary: one raw datagram
          --sample NAME      embedded sample: rfc9001-client-initial | rfc9001-server-initial
          --pcap PATH        pcap or pcapng capture (Ethernet, Linux SLL/SLL2, raw IPv4/IPv6; UDP)
          --nettrace PATH    EventPipe trace with the System.Net.Quic.Managed datagram events
                             (dotnet-trace collect -p PID --providers System.Net.Quic.Managed:0x1:5)
          --pid PID          attach to a running process through EventPipe and print its datagrams live
        options:
          --binary           --file holds raw bytes instead of hex
          --seconds N        --pid: stop after N seconds (default 10)
          --counters         --pid or --nettrace: print the counters (EventCounters and Meter instruments, like
                             dotnet-counters monitor) instead of datagrams
          --port N           pcap: only UDP datagrams from or to port N
          --keylog PATH      NSS key log (SSLKEYLOGFILE) to decrypt Handshake and 1-RTT packets
          --odcid HEX        the client's original Destination Connection ID (server Initials without the client's)
          --cid-len N        DCID length for short headers of connections not seen in long headers
          --cid HEX          only packets whose DCID or SCID equals HEX
          --frame TYPE       only frames of TYPE (padding, ping, ack, crypto, stream, connection_close, ...)
          -h, --help         this text
        exit codes: 0 success, 1 an input file cannot be read, 2 bad arguments
        """;

    public string? Hex { get; private set; }

    public string? FilePath { get; private set; }

    public bool Binary { get; private set; }

    public string? Sample { get; private set; }

    public string? PcapPath { get; private set; }

    public string? NetTracePath { get; private set; }

    public int? ProcessId { get; private set; }

    public int Seconds { get; private set; } = 10;

    public bool Counters { get; private set; }

    public int? Port { get; private set; }

    public string? KeyLogPath { get; private set; }

    public byte[]? OriginalDcid { get; private set; }

    public int? CidLength { get; private set; }

    public byte[]? CidFilter { get; private set; }

    public string? FrameFilter { get; private set; }

    public bool Help { get; private set; }

    /// <summary>Parses <paramref name="args"/>; on failure <paramref name="error"/> says what is wrong.</summary>
    public static bool TryParse(string[] args, out DumperArguments parsed, out string? error)
    {
        parsed = new DumperArguments();
        error = null;
        int inputs = 0;
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            switch (name)
            {
                case "-h":
                case "--help":
                    parsed.Help = true;
                    continue;
                case "--binary":
                    parsed.Binary = true;
                    continue;
                case "--counters":
                    parsed.Counters = true;
                    continue;
            }

            if (!name.StartsWith("--", StringComparison.Ordinal))
            {
                error = $"unexpected argument '{name}'";
                return false;
            }

            if (i + 1 >= args.Length)
            {
                error = $"{name} needs a value";
                return false;
            }

            string value = args[++i];
            switch (name)
            {
                case "--hex":
                    if (!HexText.TryParse(value, out _))
                    {
                        error = "--hex: not valid hex";
                        return false;
                    }

                    parsed.Hex = value;
                    inputs++;
                    break;
                case "--file":
                    parsed.FilePath = value;
                    inputs++;
                    break;
                case "--sample":
                    if (!SampleDatagrams.TryGet(value, out _, out _))
                    {
                        error = $"--sample: unknown sample '{value}' (known: {string.Join(", ", SampleDatagrams.Names)})";
                        return false;
                    }

                    parsed.Sample = value;
                    inputs++;
                    break;
                case "--pcap":
                    parsed.PcapPath = value;
                    inputs++;
                    break;
                case "--nettrace":
                    parsed.NetTracePath = value;
                    inputs++;
                    break;
                case "--pid":
                    if (!TryParseInt(value, 1, int.MaxValue, out int pid))
                    {
                        error = "--pid: expected a process ID";
                        return false;
                    }

                    parsed.ProcessId = pid;
                    inputs++;
                    break;
                case "--seconds":
                    if (!TryParseInt(value, 1, 86_400, out int seconds))
                    {
                        error = "--seconds: expected 1..86400";
                        return false;
                    }

                    parsed.Seconds = seconds;
                    break;
                case "--keylog":
                    parsed.KeyLogPath = value;
                    break;
                case "--port":
                    if (!TryParseInt(value, 0, 65535, out int port))
                    {
                        error = "--port: expected 0..65535";
                        return false;
                    }

                    parsed.Port = port;
                    break;
                case "--cid-len":
                    if (!TryParseInt(value, 0, 20, out int cidLength))
                    {
                        error = "--cid-len: expected 0..20 (RFC 9000 §17.2)";
                        return false;
                    }

                    parsed.CidLength = cidLength;
                    break;
                case "--odcid":
                    if (!HexText.TryParse(value, out byte[] odcid) || odcid.Length > 20)
                    {
                        error = "--odcid: expected hex of at most 20 bytes";
                        return false;
                    }

                    parsed.OriginalDcid = odcid;
                    break;
                case "--cid":
                    if (!HexText.TryParse(value, out byte[] cid) || cid.Length > 255)
                    {
                        error = "--cid: expected hex";
                        return false;
                    }

                    parsed.CidFilter = cid;
                    break;
                case "--frame":
                    string frame = value.ToLowerInvariant();
                    bool known = false;
                    foreach (string candidate in QuicNames.FrameFilterNames) known |= candidate == frame;
                    if (!known)
                    {
                        error = $"--frame: unknown frame type '{value}' (known: {string.Join(", ", QuicNames.FrameFilterNames)})";
                        return false;
                    }

                    parsed.FrameFilter = frame;
                    break;
                default:
                    error = $"unknown option '{name}'";
                    return false;
            }
        }

        if (parsed.Help) return true;
        if (inputs != 1)
        {
            error = inputs == 0 ? "no input: give one of --hex, --file, --sample, --pcap, --nettrace, --pid" : "give exactly one input";
            return false;
        }

        if (parsed.Counters && parsed.ProcessId == null && parsed.NetTracePath == null)
        {
            error = "--counters applies to --pid and --nettrace only";
            return false;
        }

        if (parsed.Binary && parsed.FilePath == null)
        {
            error = "--binary applies to --file only";
            return false;
        }

        if (parsed.Port != null && parsed.PcapPath == null)
        {
            error = "--port applies to --pcap only";
            return false;
        }

        return true;
    }

    private static bool TryParseInt(string text, int min, int max, out int value) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) && value >= min && value <= max;
}
