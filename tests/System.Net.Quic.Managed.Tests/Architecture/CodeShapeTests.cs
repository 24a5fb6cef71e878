using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Architecture;

/// <summary>
/// The code-shape table of docs/ARCHITECTURE.md (between the code-shape markers) is what this test computes from the
/// source: its "now" column from the working tree, its "before" column from the commit <see cref="BeforeCommit"/>
/// (read with git archive). The test fails when the table and the code disagree and prints the table to paste; with
/// CODE_SHAPE_UPDATE=1 it writes the table into the document instead:
/// <c>CODE_SHAPE_UPDATE=1 dotnet test tests/System.Net.Quic.Managed.Tests -c Release --filter CodeShapeTests</c>.
/// Without git or the commit (a shallow clone) the "before" column is kept as the document has it; without the
/// <c>duplicates</c> command on PATH the duplicate-pairs row is kept as the document has it. Both cases are reported.
/// </summary>
public class CodeShapeTests
{
    /// <summary>The main branch before typed frames, one AckRange/EcnCounts and the Connection sub-states' follow-up.</summary>
    public const string BeforeCommit = "aefdf22";

    private const string Begin = "<!-- code-shape:begin -->";
    private const string End = "<!-- code-shape:end -->";
    private const int LargestTypes = 6;

    private readonly ITestOutputHelper _output;

    public CodeShapeTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public void ArchitectureDocumentTableMatchesTheCode()
    {
        string? root = FindRepositoryRoot();
        if (root is null)
        {
            _output.WriteLine("SKIP: no repository checkout above the test binaries (docs/ARCHITECTURE.md not found)");
            return;
        }

        string docPath = Path.Combine(root, "docs", "ARCHITECTURE.md");
        string doc = File.ReadAllText(docPath);
        int begin = doc.IndexOf(Begin, StringComparison.Ordinal);
        int end = doc.IndexOf(End, StringComparison.Ordinal);
        Assert.True(begin >= 0 && end > begin, $"docs/ARCHITECTURE.md has no {Begin} ... {End} block");
        string documented = doc.Substring(begin + Begin.Length, end - begin - Begin.Length).Trim('\n');
        Dictionary<string, (string Before, string Now)> documentedRows = ParseRows(documented);

        Shape now = Shape.Measure(root);
        Shape? before = null;
        string? beforeTree = ExtractCommit(root, BeforeCommit);
        try
        {
            if (beforeTree is not null) before = Shape.Measure(beforeTree);
        }
        finally
        {
            if (beforeTree is not null) Directory.Delete(beforeTree, recursive: true);
        }

        if (before is null) _output.WriteLine($"'before' column not checked: git or commit {BeforeCommit} not available here");
        if (now.DuplicatePairs is null) _output.WriteLine("duplicate-pairs row not checked: the duplicates command is not on PATH");
        string table = Render(before, now, documentedRows);

        if (Environment.GetEnvironmentVariable("CODE_SHAPE_UPDATE") == "1")
        {
            File.WriteAllText(docPath, doc.Substring(0, begin + Begin.Length) + "\n" + table + "\n" + doc.Substring(end));
            _output.WriteLine("docs/ARCHITECTURE.md code-shape table written:\n" + table);
            return;
        }

        Assert.True(documented == table,
            "docs/ARCHITECTURE.md's code-shape table disagrees with the code. Regenerate it with\n" +
            "  CODE_SHAPE_UPDATE=1 dotnet test tests/System.Net.Quic.Managed.Tests -c Release --filter CodeShapeTests\n" +
            "computed table:\n" + table + "\ndocumented table:\n" + documented);
    }

    [Fact]
    public void MeasuresFieldsSwitchesAndEnumMembersOfAKnownSource()
    {
        string dir = Path.Combine(Path.GetTempPath(), "code-shape-" + Guid.NewGuid().ToString("N"));
        string src = Path.Combine(dir, "src", "Lib", "Core");
        Directory.CreateDirectory(src);
        try
        {
            File.WriteAllText(Path.Combine(src, "Thing.cs"), string.Join('\n',
                "namespace Lib.Core;",
                "",
                "internal sealed partial class Thing",
                "{",
                "    private const int NotAField = 1;",
                "    private readonly int _a;",
                "    private static readonly object s_b = new();",
                "    private (long Offset, int Start) _c;",
                "    private readonly List<int> _d =",
                "        new();",
                "    public int Property { get; set; }",
                "    public int Expression => _a;",
                "    private void Method() { }",
                "    private struct Nested",
                "    {",
                "        private int _notCounted;",
                "    }",
                "    private static int Pick(FrameType type)",
                "    {",
                "        switch (type)",
                "        {",
                "            case FrameType.Ping: return 1;",
                "        }",
                "        switch (kind)",
                "        {",
                "            case Http3FrameType.Data: return 4;",
                "        }",
                "        _ = kind switch",
                "        {",
                "            SentFrameKind.Ack => FrameType.Ack,",
                "        };",
                "        return type switch",
                "        {",
                "            FrameType.Padding => 2,",
                "            _ => 3,",
                "        };",
                "    }",
                "}"));
            File.WriteAllText(Path.Combine(src, "Thing.Other.cs"), "namespace Lib.Core;\n\ninternal sealed partial class Thing\n{\n    private int _e;\n}\n");
            File.WriteAllText(Path.Combine(src, "SentFrameKind.cs"), "namespace Lib.Core;\n\ninternal enum SentFrameKind : byte\n{\n    /// <summary>x</summary>\n    Stream,\n\n    Ack,\n    Ping = 7,\n}\n");

            Shape shape = Shape.Measure(dir, runDuplicates: false);

            TypeShape thing = Assert.Single(shape.Types, t => t.Name == "Thing");
            Assert.Equal(2, thing.Files);
            Assert.Equal(5, thing.Fields);
            Assert.Equal(44, thing.Lines);
            Assert.Equal(2, shape.FrameTypeSwitches);
            Assert.Equal(3, shape.SentFrameKinds);
            Assert.Null(shape.DuplicatePairs);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static string Render(Shape? before, Shape now, Dictionary<string, (string Before, string Now)> documented)
    {
        var rows = new List<(string Name, string Before, string Now)>();
        string Kept(string name, string? computedBefore) =>
            computedBefore ?? (documented.TryGetValue(name, out var d) ? d.Before : "?");

        var names = now.Types.OrderByDescending(t => t.Lines).Take(LargestTypes).Select(t => t.Name).ToList();
        if (before is not null)
        {
            foreach (string name in before.Types.OrderByDescending(t => t.Lines).Take(LargestTypes).Select(t => t.Name))
            {
                if (!names.Contains(name)) names.Add(name);
            }
        }
        else
        {
            foreach (string row in documented.Keys)
            {
                const string Prefix = "`";
                if (row.StartsWith(Prefix, StringComparison.Ordinal) && row.EndsWith("` lines / files / fields", StringComparison.Ordinal))
                {
                    string name = row.Substring(1, row.IndexOf('`', 1) - 1);
                    if (!names.Contains(name)) names.Add(name);
                }
            }
        }

        foreach (string name in names)
        {
            string rowName = $"`{name}` lines / files / fields";
            rows.Add((rowName, Kept(rowName, before is null ? null : Format(before.Types.FirstOrDefault(t => t.Name == name))),
                Format(now.Types.FirstOrDefault(t => t.Name == name))));
        }

        const string Switches = "switches over `FrameType` (src, tests, tools)";
        rows.Add((Switches, Kept(Switches, before?.FrameTypeSwitches.ToString()), now.FrameTypeSwitches.ToString()));
        const string Kinds = "`SentFrameKind` members";
        rows.Add((Kinds, Kept(Kinds, before?.SentFrameKinds.ToString()), now.SentFrameKinds.ToString()));
        const string Twins = "declarations of `AckRange` and `EcnCounts`";
        rows.Add((Twins, Kept(Twins, before?.AckRangeAndEcnCountsTypes.ToString()), now.AckRangeAndEcnCountsTypes.ToString()));
        const string Duplicates = "`duplicates --repo src` pairs";
        rows.Add((Duplicates,
            before?.DuplicatePairs?.ToString() ?? Kept(Duplicates, null),
            now.DuplicatePairs?.ToString() ?? (documented.TryGetValue(Duplicates, out var dup) ? dup.Now : "?")));

        var text = new StringBuilder();
        text.Append($"| measure | before ({BeforeCommit}) | now |\n|---|---|---|\n");
        foreach ((string name, string b, string n) in rows) text.Append($"| {name} | {b} | {n} |\n");
        return text.ToString().TrimEnd('\n');
    }

    private static string Format(TypeShape? type) => type is null ? "-" : $"{type.Lines:N0} / {type.Files} / {type.Fields}";

    private static Dictionary<string, (string Before, string Now)> ParseRows(string table)
    {
        var rows = new Dictionary<string, (string, string)>();
        foreach (string line in table.Split('\n'))
        {
            string[] cells = line.Split('|');
            if (cells.Length < 5 || line.StartsWith("|---", StringComparison.Ordinal)) continue;
            rows[cells[1].Trim()] = (cells[2].Trim(), cells[3].Trim());
        }
        return rows;
    }

    private static string? FindRepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "QuicManaged.sln")) && File.Exists(Path.Combine(dir.FullName, "docs", "ARCHITECTURE.md")))
            {
                return dir.FullName;
            }
        }
        return null;
    }

    /// <summary>The src, tests and tools folders of <paramref name="commit"/> in a new temporary folder; null without git or the commit.</summary>
    private static string? ExtractCommit(string root, string commit)
    {
        if (Run(root, "git", $"cat-file -e {commit}^{{commit}}", out _) != 0) return null;
        string dir = Path.Combine(Path.GetTempPath(), "code-shape-" + commit + "-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        string archive = Path.Combine(dir, "tree.tar");
        if (Run(root, "git", $"archive --format=tar -o \"{archive}\" {commit} src tests tools", out _) != 0)
        {
            Directory.Delete(dir, recursive: true);
            return null;
        }
        System.Formats.Tar.TarFile.ExtractToDirectory(archive, dir, overwriteFiles: true);
        File.Delete(archive);
        return dir;
    }

    internal static int Run(string workingDirectory, string command, string arguments, out string stdout)
    {
        stdout = "";
        var info = new ProcessStartInfo(command, arguments)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        try
        {
            using Process process = Process.Start(info)!;
            Task<string> error = process.StandardError.ReadToEndAsync();
            stdout = process.StandardOutput.ReadToEnd();
            process.WaitForExit();
            _ = error.Result;
            return process.ExitCode;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return -1; // not installed
        }
    }

    internal sealed record TypeShape(string Name, int Lines, int Files, int Fields);

    /// <summary>
    /// Measures of one source tree. Types: top-level class/struct/record declarations under src/ (a partial type's
    /// files add up; a file counts for the first type it declares); fields: declarations at member level (4-space
    /// indent: file-scoped namespaces), static ones included, constants and nested types' fields not. Switches: switch
    /// statements and expressions whose first case label or arm pattern is a <c>FrameType.</c> value, in src, tests and tools.
    /// </summary>
    internal sealed class Shape
    {
        private static readonly Regex s_typeDeclaration = new(
            @"^(?:(?:public|internal|private|protected|sealed|static|abstract|readonly|ref|partial|unsafe|file)\s+)*(?:class|struct|record(?:\s+struct|\s+class)?|interface|enum)\s+(\w+)",
            RegexOptions.Compiled);
        private static readonly Regex s_fieldHead = new(
            @"^    (?:(?:private|internal|public|protected|static|readonly|volatile|new|required|unsafe|fixed)\s+)+(?!const\b|event\b|class\b|struct\b|record\b|enum\b|interface\b|delegate\b|abstract\b|virtual\b|override\b|partial\b|implicit\b|explicit\b)[\w<>\[\],\.\?\s\(\)*]+?\s+@?\w+\s*$",
            RegexOptions.Compiled);
        private static readonly Regex s_callLike = new(@"[A-Za-z0-9_>]\(", RegexOptions.Compiled);

        public List<TypeShape> Types { get; } = new();
        public int FrameTypeSwitches { get; private set; }
        public int SentFrameKinds { get; private set; }
        public int AckRangeAndEcnCountsTypes { get; private set; }
        public int? DuplicatePairs { get; private set; }

        public static Shape Measure(string root, bool runDuplicates = true)
        {
            var shape = new Shape();
            var types = new Dictionary<string, (int Lines, int Files, int Fields)>();
            foreach (string file in SourceFiles(Path.Combine(root, "src")))
            {
                string[] lines = File.ReadAllLines(file);
                string? name = null;
                foreach (string line in lines)
                {
                    Match m = s_typeDeclaration.Match(line);
                    if (!m.Success) continue;
                    if (m.Groups[1].Value is "AckRange" or "EcnCounts") shape.AckRangeAndEcnCountsTypes++;
                    name ??= m.Groups[1].Value;
                }
                if (name is null) continue;
                types.TryGetValue(name, out var t);
                types[name] = (t.Lines + lines.Length, t.Files + 1, t.Fields + CountFields(lines));
                if (Path.GetFileName(file) == "SentFrameKind.cs") shape.SentFrameKinds = CountEnumMembers(lines);
            }
            foreach ((string name, var t) in types) shape.Types.Add(new TypeShape(name, t.Lines, t.Files, t.Fields));

            foreach (string folder in new[] { "src", "tests", "tools" })
            {
                foreach (string file in SourceFiles(Path.Combine(root, folder))) shape.FrameTypeSwitches += CountFrameTypeSwitches(File.ReadAllLines(file));
            }

            if (runDuplicates && Run(root, "duplicates", "--repo src --most 1 --seconds 120", out string output) == 0)
            {
                Match m = Regex.Match(output, @"^(\d+) pairs", RegexOptions.Multiline);
                if (m.Success && !output.Contains("incomplete:", StringComparison.Ordinal)) shape.DuplicatePairs = int.Parse(m.Groups[1].Value);
                else if (output.StartsWith("no duplicates", StringComparison.Ordinal)) shape.DuplicatePairs = 0;
            }
            return shape;
        }

        private static IEnumerable<string> SourceFiles(string folder)
        {
            if (!Directory.Exists(folder)) yield break;
            foreach (string file in Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
            {
                string relative = Path.GetRelativePath(folder, file).Replace('\\', '/');
                if (relative.Contains("/obj/") || relative.Contains("/bin/") || relative.StartsWith("obj/") || relative.StartsWith("bin/")) continue;
                yield return file;
            }
        }

        internal static int CountFields(string[] lines)
        {
            int count = 0;
            for (int i = 0; i < lines.Length; i++)
            {
                string line = lines[i].TrimEnd();
                if (line.Contains("=>", StringComparison.Ordinal) || line.Contains('{')) continue;
                int equals = IndexOfAssignment(line);
                string head = equals >= 0 ? line.Substring(0, equals) : line;
                if (equals < 0)
                {
                    if (!head.EndsWith(';')) continue;
                    head = head.Substring(0, head.Length - 1);
                }
                if (s_callLike.IsMatch(head) || !s_fieldHead.IsMatch(head)) continue;
                count++;
            }
            return count;
        }

        private static int IndexOfAssignment(string line)
        {
            for (int i = 1; i < line.Length; i++)
            {
                if (line[i] == '=' && line[i - 1] is not ('=' or '!' or '<' or '>') && (i + 1 == line.Length || line[i + 1] != '=')) return i;
            }
            return -1;
        }

        internal static int CountEnumMembers(string[] lines)
        {
            int count = 0;
            bool inside = false;
            foreach (string raw in lines)
            {
                string line = raw.Trim();
                if (line == "{") { inside = true; continue; }
                if (line == "}") break;
                if (inside && Regex.IsMatch(line, @"^\w+\s*(=\s*[^,]+)?,?$")) count++;
            }
            return count;
        }

        internal static int CountFrameTypeSwitches(string[] lines)
        {
            int count = 0;
            for (int i = 0; i < lines.Length; i++)
            {
                if (!Regex.IsMatch(lines[i], @"(^|\s)switch(\s*\(|\s*$)")) continue;
                for (int j = i + 1; j < lines.Length && j <= i + 6; j++)
                {
                    string next = lines[j].Trim();
                    if (next.Length == 0 || next == "{" || next.StartsWith("//", StringComparison.Ordinal)) continue;
                    if (Regex.IsMatch(next, @"^(case\s+([<>]=?\s*)?)?FrameType\.")) count++;
                    break;
                }
            }
            return count;
        }
    }
}
