using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;

namespace QuicManaged.Tools.DatagramDumper;

/// <summary>
/// Parsed command line (System.CommandLine). Exactly one input (--hex, --file, --sample, --pcap, --nettrace, --pid)
/// is required.
/// </summary>
internal sealed class DumperArguments
{
    private const string Description = """
        Prints QUIC datagrams as readable packets and frames (TLS handshake messages included), decrypting Initial
        packets always and Handshake/1-RTT packets with an NSS key log. Exactly one input: --hex, --file, --sample,
        --pcap, --nettrace or --pid.
        Exit codes: 0 success, 1 an input file cannot be read, 2 bad arguments.
        """;

    private static readonly Option<string?> s_hexOption = new("--hex")
    {
        HelpName = "HEX",
        Description = "Input: one datagram as hex.",
        CustomParser = r => Check(r, v => HexText.TryParse(v, out _), _ => "--hex: not valid hex"),
    };

    private static readonly Option<string?> s_fileOption = new("--file")
    {
        HelpName = "PATH",
        Description = "Input: hex datagrams, one per line ('#' starts a comment); with --binary: one raw datagram.",
    };

    private static readonly Option<string?> s_sampleOption = new("--sample")
    {
        HelpName = "NAME",
        Description = $"Input: an embedded sample: {string.Join(" | ", SampleDatagrams.Names)}.",
        CustomParser = r => Check(
            r,
            v => SampleDatagrams.TryGet(v, out _, out _),
            v => $"--sample: unknown sample '{v}' (known: {string.Join(", ", SampleDatagrams.Names)})"),
    };

    private static readonly Option<string?> s_pcapOption = new("--pcap")
    {
        HelpName = "PATH",
        Description = "Input: a pcap or pcapng capture (Ethernet, Linux SLL/SLL2, raw IPv4/IPv6; UDP).",
    };

    private static readonly Option<string?> s_netTraceOption = new("--nettrace")
    {
        HelpName = "PATH",
        Description = "Input: an EventPipe trace with the System.Net.Quic.Managed datagram events "
            + "(dotnet-trace collect -p PID --providers System.Net.Quic.Managed:0x1:5).",
    };

    private static readonly Option<int?> s_pidOption = new("--pid")
    {
        HelpName = "PID",
        Description = "Input: attach to a running process through EventPipe and print its datagrams live.",
        CustomParser = r => Int(r, 1, int.MaxValue, "--pid: expected a process ID"),
    };

    private static readonly Option<bool> s_binaryOption = new("--binary")
    {
        Description = "--file holds raw bytes instead of hex.",
    };

    private static readonly Option<int> s_secondsOption = new("--seconds")
    {
        HelpName = "N",
        Description = "--pid: stop after N seconds (1..86400).",
        DefaultValueFactory = _ => 10,
        CustomParser = r => Int(r, 1, 86_400, "--seconds: expected 1..86400") ?? 0,
    };

    private static readonly Option<bool> s_countersOption = new("--counters")
    {
        Description = "--pid or --nettrace: print the counters (EventCounters and Meter instruments, like "
            + "dotnet-counters monitor) instead of datagrams.",
    };

    private static readonly Option<int?> s_portOption = new("--port")
    {
        HelpName = "N",
        Description = "--pcap: only UDP datagrams from or to port N.",
        CustomParser = r => Int(r, 0, 65535, "--port: expected 0..65535"),
    };

    private static readonly Option<string?> s_keyLogOption = new("--keylog")
    {
        HelpName = "PATH",
        Description = "NSS key log (SSLKEYLOGFILE) to decrypt Handshake and 1-RTT packets.",
    };

    private static readonly Option<byte[]?> s_odcidOption = new("--odcid")
    {
        HelpName = "HEX",
        Description = "The client's original Destination Connection ID (server Initials without the client's).",
        CustomParser = r => Bytes(r, 20, "--odcid: expected hex of at most 20 bytes"),
    };

    private static readonly Option<int?> s_cidLengthOption = new("--cid-len")
    {
        HelpName = "N",
        Description = "DCID length (0..20) for short headers of connections not seen in long headers.",
        CustomParser = r => Int(r, 0, 20, "--cid-len: expected 0..20 (RFC 9000 §17.2)"),
    };

    private static readonly Option<byte[]?> s_cidOption = new("--cid")
    {
        HelpName = "HEX",
        Description = "Only packets whose DCID or SCID equals HEX.",
        CustomParser = r => Bytes(r, 255, "--cid: expected hex"),
    };

    private static readonly Option<string?> s_frameOption = new("--frame")
    {
        HelpName = "TYPE",
        Description = $"Only frames of TYPE: {string.Join(", ", QuicNames.FrameFilterNames)}.",
        CustomParser = r =>
        {
            string value = r.Tokens[0].Value;
            string frame = value.ToLowerInvariant();
            if (QuicNames.FrameFilterNames.Contains(frame)) return frame;
            r.AddError($"--frame: unknown frame type '{value}' (known: {string.Join(", ", QuicNames.FrameFilterNames)})");
            return null;
        },
    };

    private static readonly Command s_command = CreateCommand();

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

    /// <summary>The full --help text.</summary>
    public static string Usage
    {
        get
        {
            var text = new StringWriter();
            s_command.Parse(["--help"]).Invoke(new InvocationConfiguration { Output = text, Error = text });
            return text.ToString().TrimEnd();
        }
    }

    /// <summary>Parses <paramref name="args"/>; on failure <paramref name="error"/> says what is wrong.</summary>
    public static bool TryParse(string[] args, out DumperArguments parsed, out string? error)
    {
        parsed = new DumperArguments();
        error = null;
        ParseResult result = s_command.Parse(args);
        if (result.Action is System.CommandLine.Help.HelpAction)
        {
            parsed.Help = true;
            return true;
        }

        if (result.Errors.Count > 0)
        {
            error = result.Errors[0].Message;
            return false;
        }

        parsed.Hex = result.GetValue(s_hexOption);
        parsed.FilePath = result.GetValue(s_fileOption);
        parsed.Binary = result.GetValue(s_binaryOption);
        parsed.Sample = result.GetValue(s_sampleOption);
        parsed.PcapPath = result.GetValue(s_pcapOption);
        parsed.NetTracePath = result.GetValue(s_netTraceOption);
        parsed.ProcessId = result.GetValue(s_pidOption);
        parsed.Seconds = result.GetValue(s_secondsOption);
        parsed.Counters = result.GetValue(s_countersOption);
        parsed.Port = result.GetValue(s_portOption);
        parsed.KeyLogPath = result.GetValue(s_keyLogOption);
        // An absent array-valued option reads as an empty array: only a given one counts.
        parsed.OriginalDcid = result.GetResult(s_odcidOption) is null ? null : result.GetValue(s_odcidOption);
        parsed.CidLength = result.GetValue(s_cidLengthOption);
        parsed.CidFilter = result.GetResult(s_cidOption) is null ? null : result.GetValue(s_cidOption);
        parsed.FrameFilter = result.GetValue(s_frameOption);
        return true;
    }

    private static Command CreateCommand()
    {
        // A named command rather than RootCommand (named after the host executable): the help reads the same in any host.
        var command = new Command("DatagramDumper", Description)
        {
            s_hexOption, s_fileOption, s_sampleOption, s_pcapOption, s_netTraceOption, s_pidOption,
            s_binaryOption, s_secondsOption, s_countersOption, s_portOption, s_keyLogOption, s_odcidOption, s_cidLengthOption, s_cidOption, s_frameOption,
            new System.CommandLine.Help.HelpOption { Recursive = true },
        };
        foreach (Option option in command.Options)
        {
            if (option.Action is System.CommandLine.Help.HelpAction help) help.MaxWidth = 120;
        }

        command.Validators.Add(static r =>
        {
            int inputs = 0;
            foreach (Option input in new Option[] { s_hexOption, s_fileOption, s_sampleOption, s_pcapOption, s_netTraceOption, s_pidOption })
            {
                // Every occurrence counts: "--hex 00 --hex 01" is two inputs.
                if (r.GetResult(input) is { } given) inputs += Math.Max(1, given.IdentifierTokenCount);
            }

            if (inputs != 1)
            {
                r.AddError(inputs == 0 ? "no input: give one of --hex, --file, --sample, --pcap, --nettrace, --pid" : "give exactly one input");
            }
            else if (Given(r, s_countersOption) && !Given(r, s_pidOption) && !Given(r, s_netTraceOption))
            {
                r.AddError("--counters applies to --pid and --nettrace only");
            }
            else if (Given(r, s_binaryOption) && !Given(r, s_fileOption))
            {
                r.AddError("--binary applies to --file only");
            }
            else if (Given(r, s_portOption) && !Given(r, s_pcapOption))
            {
                r.AddError("--port applies to --pcap only");
            }
        });
        return command;
    }

    private static bool Given(CommandResult result, Option option) => result.GetResult(option) is { Implicit: false };

    private static string? Check(ArgumentResult result, Func<string, bool> valid, Func<string, string> message)
    {
        string value = result.Tokens[0].Value;
        if (valid(value)) return value;
        result.AddError(message(value));
        return null;
    }

    private static int? Int(ArgumentResult result, int min, int max, string message)
    {
        if (int.TryParse(result.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int value) && value >= min && value <= max)
        {
            return value;
        }

        result.AddError(message);
        return null;
    }

    private static byte[]? Bytes(ArgumentResult result, int maxLength, string message)
    {
        if (HexText.TryParse(result.Tokens[0].Value, out byte[] value) && value.Length <= maxLength) return value;
        result.AddError(message);
        return null;
    }
}
