using System.CommandLine;
using System.Globalization;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>
/// Command line of the emulator (System.CommandLine). Both directions get the same impairments (each with its own state).
/// </summary>
internal sealed class EmulatorOptions
{
    private const string Description = """
        Relays IP packets between two TUN devices (emuA <-> emuB, to be moved into network namespaces) and impairs
        them: delay, jitter, loss (Bernoulli or Gilbert-Elliott bursts), reordering and a rate-limited drop-tail
        queue, seeded and applied to each direction separately. SIGUSR1 writes the stats JSON now; SIGINT/SIGTERM stop.
        Exit codes: 0 ok, 2 bad arguments.
        """;

    private static readonly ImpairmentOptions s_defaults = new();

    private static readonly Option<string> s_tunAOption = new("--tun-a")
    {
        HelpName = "NAME",
        Description = "Name of the first TUN device.",
        DefaultValueFactory = _ => "emuA",
    };

    private static readonly Option<string> s_tunBOption = new("--tun-b")
    {
        HelpName = "NAME",
        Description = "Name of the second TUN device.",
        DefaultValueFactory = _ => "emuB",
    };

    private static readonly Option<double> s_delayOption = NonNegative("--delay-ms", "D", "One-way propagation delay in milliseconds.", s_defaults.DelayUs / 1000.0);

    private static readonly Option<double> s_jitterOption = NonNegative(
        "--jitter-ms", "J", "Half-width of a uniform jitter added to the delay, in milliseconds (jitter alone never reorders).", s_defaults.JitterUs / 1000.0);

    private static readonly Option<double> s_lossOption = Probability("--loss", "P", "Independent loss probability per packet (when Gilbert-Elliott is off).", s_defaults.LossProbability);

    private static readonly Option<double> s_goodToBadOption = Probability("--ge-p", "P(G->B)", "Gilbert-Elliott burst loss: probability of moving Good->Bad per packet; 0 disables the model.", s_defaults.BurstGoodToBad);

    private static readonly Option<double> s_badToGoodOption = Probability("--ge-r", "P(B->G)", "Gilbert-Elliott: probability of moving Bad->Good per packet.", s_defaults.BurstBadToGood);

    private static readonly Option<double> s_lossInBadOption = Probability("--ge-loss-bad", "P", "Gilbert-Elliott: loss probability in the Bad state.", s_defaults.BurstLossInBad);

    private static readonly Option<double> s_lossInGoodOption = Probability("--ge-loss-good", "P", "Gilbert-Elliott: loss probability in the Good state.", s_defaults.BurstLossInGood);

    private static readonly Option<double> s_reorderOption = Probability("--reorder", "P", "Probability that a packet is held back by the reorder gap so later packets overtake it.", s_defaults.ReorderProbability);

    private static readonly Option<double> s_reorderGapOption = NonNegative("--reorder-gap-ms", "G", "Extra hold of a reordered packet, in milliseconds.", s_defaults.ReorderGapUs / 1000.0);

    private static readonly Option<double> s_rateOption = NonNegative("--rate-mbit", "R", "Bottleneck rate in Mbit/s; 0 means unlimited (no serialization delay, no queue).", s_defaults.RateBitsPerSecond / 1e6);

    private static readonly Option<double> s_queueOption = NonNegative("--queue-kb", "Q", "Drop-tail limit in KiB on bytes waiting at the bottleneck (only with a rate).", s_defaults.QueueLimitBytes / 1024.0);

    private static readonly Option<int> s_seedOption = new("--seed")
    {
        HelpName = "S",
        Description = "Seed of the random impairments (same seed, same fates).",
        DefaultValueFactory = _ => 1,
        CustomParser = r =>
        {
            if (int.TryParse(r.Tokens[0].Value, NumberStyles.Integer, CultureInfo.InvariantCulture, out int seed)) return seed;
            r.AddError($"--seed: expected an integer, not '{r.Tokens[0].Value}'");
            return 0;
        },
    };

    private static readonly Option<string?> s_statsJsonOption = new("--stats-json")
    {
        HelpName = "PATH",
        Description = "Write the counters of both directions as JSON to PATH every stats interval and at exit.",
    };

    private static readonly Option<double> s_statsIntervalOption = Number("--stats-interval-s", "T", "Seconds between two writes of --stats-json.", 1.0, static _ => true, "");

    private static readonly Option<double> s_durationOption = Number("--duration-s", "N", "Stop after N seconds; 0 (or less) runs until SIGINT/SIGTERM.", 0, static _ => true, "");

    public string TunA { get; set; } = "emuA";
    public string TunB { get; set; } = "emuB";
    public ImpairmentOptions Impairment { get; } = new();
    public int Seed { get; set; } = 1;
    public string? StatsJsonPath { get; set; }
    public double StatsIntervalSeconds { get; set; } = 1.0;
    public double DurationSeconds { get; set; }

    /// <summary>
    /// The whole command line: the emulator's options (running <paramref name="run"/>, when given, with them) and the
    /// <c>probe server|client</c> commands.
    /// </summary>
    public static Command CreateCommand(Func<EmulatorOptions, int>? run = null)
    {
        var command = new Command("LinkEmulator", Description)
        {
            s_tunAOption, s_tunBOption, s_delayOption, s_jitterOption, s_lossOption, s_goodToBadOption, s_badToGoodOption, s_lossInBadOption,
            s_lossInGoodOption, s_reorderOption, s_reorderGapOption, s_rateOption, s_queueOption, s_seedOption, s_statsJsonOption,
            s_statsIntervalOption, s_durationOption, ProbeCommand.Create(),
            new System.CommandLine.Help.HelpOption { Recursive = true },
        };
        foreach (Option option in command.Options)
        {
            if (option.Action is System.CommandLine.Help.HelpAction help) help.MaxWidth = 120;
        }

        command.SetAction(result => run?.Invoke(Bind(result)) ?? 0);
        return command;
    }

    /// <summary>The emulator's options from <paramref name="args"/>; <see cref="ArgumentException"/> says what is wrong.</summary>
    public static EmulatorOptions Parse(string[] args)
    {
        ParseResult result = CreateCommand().Parse(args);
        if (result.Errors.Count > 0)
        {
            throw new ArgumentException(result.Errors[0].Message);
        }

        return Bind(result);
    }

    /// <summary>The emulator's options of a parse without errors.</summary>
    public static EmulatorOptions Bind(ParseResult result)
    {
        var o = new EmulatorOptions
        {
            TunA = result.GetValue(s_tunAOption)!,
            TunB = result.GetValue(s_tunBOption)!,
            Seed = result.GetValue(s_seedOption),
            StatsJsonPath = result.GetValue(s_statsJsonOption),
            StatsIntervalSeconds = result.GetValue(s_statsIntervalOption),
            DurationSeconds = result.GetValue(s_durationOption),
        };
        ImpairmentOptions i = o.Impairment;
        i.DelayUs = (long)Math.Round(result.GetValue(s_delayOption) * 1000);
        i.JitterUs = (long)Math.Round(result.GetValue(s_jitterOption) * 1000);
        i.LossProbability = result.GetValue(s_lossOption);
        i.BurstGoodToBad = result.GetValue(s_goodToBadOption);
        i.BurstBadToGood = result.GetValue(s_badToGoodOption);
        i.BurstLossInBad = result.GetValue(s_lossInBadOption);
        i.BurstLossInGood = result.GetValue(s_lossInGoodOption);
        i.ReorderProbability = result.GetValue(s_reorderOption);
        i.ReorderGapUs = (long)Math.Round(result.GetValue(s_reorderGapOption) * 1000);
        i.RateBitsPerSecond = (long)Math.Round(result.GetValue(s_rateOption) * 1_000_000);
        i.QueueLimitBytes = (long)Math.Round(result.GetValue(s_queueOption) * 1024);
        return o;
    }

    /// <summary>A number option in invariant culture; <paramref name="valid"/> false adds <paramref name="message"/>.</summary>
    private static Option<double> Number(string name, string helpName, string description, double defaultValue, Func<double, bool> valid, string message) => new(name)
    {
        HelpName = helpName,
        Description = description,
        DefaultValueFactory = _ => defaultValue,
        CustomParser = r =>
        {
            string token = r.Tokens[0].Value;
            if (!double.TryParse(token, NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
            {
                r.AddError($"{name}: expected a number, not '{token}'");
            }
            else if (!valid(value))
            {
                r.AddError(message);
            }

            return value;
        },
    };

    private static Option<double> NonNegative(string name, string helpName, string description, double defaultValue)
        => Number(name, helpName, description, defaultValue, static v => v >= 0, "delays, rate and queue limit must not be negative");

    private static Option<double> Probability(string name, string helpName, string description, double defaultValue)
        => Number(name, helpName, description, defaultValue, static p => p >= 0 && p <= 1, $"{name} must be a probability in [0, 1]");
}
