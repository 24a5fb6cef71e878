using System;
using System.IO;
using System.Linq;

namespace QuicManaged.Fuzz;

/// <summary>
/// Coverage-guided fuzz targets for QuicManaged's untrusted inputs, driven by AFL++ through SharpFuzz.
/// <list type="bullet">
/// <item><c>QuicManaged.Fuzz TARGET</c>: the AFL fork-server loop (under afl-fuzz; otherwise one input from stdin).</item>
/// <item><c>QuicManaged.Fuzz TARGET --replay PATH...</c>: runs files (or every file of directories) through TARGET.</item>
/// <item><c>QuicManaged.Fuzz --replay-all CORPUS_DIR REGRESSIONS_DIR</c>: every target over CORPUS_DIR/TARGET/* and
/// REGRESSIONS_DIR/TARGET/*, no AFL: the deterministic check the unit suite runs.</item>
/// <item><c>QuicManaged.Fuzz --list</c>, <c>QuicManaged.Fuzz --write-corpus DIR</c> (regenerates the seed corpus).</item>
/// </list>
/// </summary>
internal static class Program
{
    private static int Main(string[] args)
    {
        if (args.Length == 1 && args[0] == "--list")
        {
            foreach (string name in Targets.All.Keys) Console.WriteLine(name);
            return 0;
        }

        if (args.Length == 2 && args[0] == "--write-corpus")
        {
            Corpus.Write(args[1]);
            return 0;
        }

        if (args.Length == 3 && args[0] == "--replay-all")
        {
            return ReplayAll(args[1], args[2]);
        }

        if (args.Length >= 1 && Targets.All.TryGetValue(args[0], out Action<byte[]>? target))
        {
            if (args.Length >= 3 && args[1] == "--replay")
            {
                (int passed, int failed) = Replay(args[0], target, args.Skip(2));
                Console.WriteLine($"replay {args[0]}: {passed} passed, {failed} failed");
                return failed == 0 ? 0 : 1;
            }

            if (args.Length == 1)
            {
                SharpFuzz.Fuzzer.Run(stream =>
                {
                    using var memory = new MemoryStream();
                    stream.CopyTo(memory);
                    byte[] input = memory.ToArray();
                    // SharpFuzz may read AFL's first input before AFL wrote it (an empty stdin): every execution must
                    // still reach instrumented code, or afl-fuzz aborts its dry run with "No instrumentation detected".
                    _ = System.Net.Quic.Managed.Wire.VariableLengthInteger.TryRead(input, out _, out _);
                    target(input);
                });
                return 0;
            }
        }

        Console.Error.WriteLine("usage: QuicManaged.Fuzz TARGET [--replay PATH...] | --replay-all CORPUS_DIR REGRESSIONS_DIR | --list | --write-corpus DIR");
        Console.Error.WriteLine("targets: " + string.Join(", ", Targets.All.Keys));
        return 2;
    }

    private static int ReplayAll(string corpus, string regressions)
    {
        int totalPassed = 0, totalFailed = 0;
        foreach ((string name, Action<byte[]> target) in Targets.All)
        {
            var paths = new List<string>();
            foreach (string root in new[] { corpus, regressions })
            {
                string directory = Path.Combine(root, name);
                if (Directory.Exists(directory)) paths.Add(directory);
            }

            (int passed, int failed) = Replay(name, target, paths);
            Console.WriteLine($"{(failed == 0 && passed > 0 ? "PASS" : "FAIL")} fuzz-replay {name}: {passed} inputs passed, {failed} failed");
            totalPassed += passed;
            totalFailed += failed + (passed == 0 ? 1 : 0);
        }

        Console.WriteLine($"fuzz-replay: {totalPassed} passed, {totalFailed} failed");
        return totalFailed == 0 ? 0 : 1;
    }

    private static (int Passed, int Failed) Replay(string name, Action<byte[]> target, IEnumerable<string> paths)
    {
        int passed = 0, failed = 0;
        foreach (string file in paths.SelectMany(Files))
        {
            try
            {
                target(File.ReadAllBytes(file));
                passed++;
            }
            catch (Exception e)
            {
                failed++;
                Console.WriteLine($"  crash in {name} on {file}: {e}");
            }
        }

        return (passed, failed);
    }

    private static IEnumerable<string> Files(string path)
        => Directory.Exists(path)
            ? Directory.GetFiles(path, "*", SearchOption.AllDirectories).Where(f => !Path.GetFileName(f).StartsWith('.') && !f.EndsWith(".md", StringComparison.Ordinal)).Order(StringComparer.Ordinal)
            : [path];
}
