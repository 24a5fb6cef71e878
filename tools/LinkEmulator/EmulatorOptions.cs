using System.Globalization;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>Command line of the emulator. Both directions get the same impairments (each with its own state).</summary>
internal sealed class EmulatorOptions
{
    public string TunA { get; set; } = "emuA";
    public string TunB { get; set; } = "emuB";
    public ImpairmentOptions Impairment { get; } = new();
    public int Seed { get; set; } = 1;
    public string? StatsJsonPath { get; set; }
    public double StatsIntervalSeconds { get; set; } = 1.0;
    public double DurationSeconds { get; set; }

    public const string Usage =
        "LinkEmulator [--tun-a emuA] [--tun-b emuB] [--delay-ms D] [--jitter-ms J] [--loss P]\n" +
        "             [--ge-p P(G->B)] [--ge-r P(B->G)] [--ge-loss-bad P] [--ge-loss-good P]\n" +
        "             [--reorder P] [--reorder-gap-ms G] [--rate-mbit R] [--queue-kb Q]\n" +
        "             [--seed S] [--stats-json PATH] [--stats-interval-s T] [--duration-s N]\n" +
        "LinkEmulator probe ...   (see 'LinkEmulator probe --help')\n" +
        "Delay, jitter, loss, reordering and rate apply to each direction. SIGUSR1 writes the stats JSON now.";

    public static EmulatorOptions Parse(string[] args)
    {
        var o = new EmulatorOptions();
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            string Value()
            {
                if (i + 1 >= args.Length)
                {
                    throw new ArgumentException($"{name} needs a value");
                }

                return args[++i];
            }

            double Number() => double.Parse(Value(), NumberStyles.Float, CultureInfo.InvariantCulture);

            switch (name)
            {
                case "--tun-a": o.TunA = Value(); break;
                case "--tun-b": o.TunB = Value(); break;
                case "--delay-ms": o.Impairment.DelayUs = (long)Math.Round(Number() * 1000); break;
                case "--jitter-ms": o.Impairment.JitterUs = (long)Math.Round(Number() * 1000); break;
                case "--loss": o.Impairment.LossProbability = Probability(name, Number()); break;
                case "--ge-p": o.Impairment.BurstGoodToBad = Probability(name, Number()); break;
                case "--ge-r": o.Impairment.BurstBadToGood = Probability(name, Number()); break;
                case "--ge-loss-bad": o.Impairment.BurstLossInBad = Probability(name, Number()); break;
                case "--ge-loss-good": o.Impairment.BurstLossInGood = Probability(name, Number()); break;
                case "--reorder": o.Impairment.ReorderProbability = Probability(name, Number()); break;
                case "--reorder-gap-ms": o.Impairment.ReorderGapUs = (long)Math.Round(Number() * 1000); break;
                case "--rate-mbit": o.Impairment.RateBitsPerSecond = (long)Math.Round(Number() * 1_000_000); break;
                case "--queue-kb": o.Impairment.QueueLimitBytes = (long)Math.Round(Number() * 1024); break;
                case "--seed": o.Seed = int.Parse(Value(), CultureInfo.InvariantCulture); break;
                case "--stats-json": o.StatsJsonPath = Value(); break;
                case "--stats-interval-s": o.StatsIntervalSeconds = Number(); break;
                case "--duration-s": o.DurationSeconds = Number(); break;
                default: throw new ArgumentException($"unknown option {name}");
            }
        }

        if (o.Impairment.DelayUs < 0 || o.Impairment.JitterUs < 0 || o.Impairment.ReorderGapUs < 0 ||
            o.Impairment.RateBitsPerSecond < 0 || o.Impairment.QueueLimitBytes < 0)
        {
            throw new ArgumentException("delays, rate and queue limit must not be negative");
        }

        return o;
    }

    private static double Probability(string name, double p)
    {
        if (!(p >= 0 && p <= 1))
        {
            throw new ArgumentException($"{name} must be a probability in [0, 1]");
        }

        return p;
    }
}
