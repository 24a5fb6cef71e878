using System.Text.RegularExpressions;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

/// <summary>
/// A capture decoded by DatagramDumper (--pcap with the key log) and the properties every such decode must have: every
/// packet decrypted, every frame parsed, and for each connection its handshake and its close. The pcap and the key log
/// are kept in artifacts/dumper-captures/ when a check fails.
/// </summary>
internal sealed partial class DecodedCapture
{
    // What the dumper prints for a packet or frame it could not decode (DatagramFormatter, FrameFormatter).
    private static readonly string[] s_undecodable =
    [
        "no keys", "decryption failed", "error:", "warning:", "internal error", "length unknown", "undecoded", "INVALID", "integrity not checked",
    ];

    private readonly string _pcap;
    private readonly string _keys;

    private DecodedCapture(string name, string text, string pcap, string keys)
    {
        Name = name;
        Text = text;
        _pcap = pcap;
        _keys = keys;
        Lines = text.Split('\n');
        Connections = ParseConnections(Lines);
    }

    public string Name { get; }

    public string Text { get; }

    public string[] Lines { get; }

    /// <summary>Per connection number: the text of its packets (header lines excluded), in capture order.</summary>
    public SortedDictionary<int, List<string>> Connections { get; }

    /// <summary>Writes the capture and runs the dumper on it with <paramref name="keyLogPath"/>.</summary>
    public static DecodedCapture Decode(string name, CaptureFile capture, string keyLogPath)
    {
        string dir = Path.Combine(RepositoryPaths.Root, "artifacts", "dumper-captures");
        Directory.CreateDirectory(dir);
        string pcap = Path.Combine(dir, name + ".pcap");
        string keys = Path.Combine(dir, name + ".keys");
        capture.Write(pcap);
        File.Copy(keyLogPath, keys, overwrite: true);
        string text = DumperGoldenTests.Run("--pcap", pcap, "--keylog", keys);
        File.WriteAllText(Path.Combine(dir, name + ".txt"), text);
        return new DecodedCapture(name, text, pcap, keys);
    }

    public int Count(string fragment)
    {
        int n = 0;
        foreach (string line in Lines)
        {
            if (line.Contains(fragment, StringComparison.Ordinal)) n++;
        }

        return n;
    }

    /// <summary>Zero undecodable packets or frames; <paramref name="connections"/> connections, each with a visible
    /// handshake (ClientHello, ServerHello, both Finished, HANDSHAKE_DONE) and close (CONNECTION_CLOSE), except the
    /// connection numbers in <paramref name="withoutHandshake"/> (attempts a Version Negotiation ended).</summary>
    public void AssertComplete(int connections, int[]? withoutHandshake = null, int minDatagrams = 4)
    {
        var bad = new List<string>();
        foreach (string line in Lines)
        {
            foreach (string marker in s_undecodable)
            {
                if (line.Contains(marker, StringComparison.Ordinal))
                {
                    bad.Add(line.Trim());
                    break;
                }
            }
        }

        Check(bad.Count == 0, $"{bad.Count} undecodable lines, first: {string.Join(" | ", bad.Take(5))}");
        Check(Count(" len=") >= minDatagrams, $"only {Count(" len=")} datagrams captured");
        Check(Connections.Count == connections, $"{Connections.Count} connections decoded, expected {connections}");
        foreach ((int number, List<string> lines) in Connections)
        {
            if (withoutHandshake != null && Array.IndexOf(withoutHandshake, number) >= 0) continue;
            AssertHandshake(number);
            Check(lines.Exists(l => l.Contains("CONNECTION_CLOSE", StringComparison.Ordinal)), $"conn={number}: no CONNECTION_CLOSE");
        }
    }

    public void AssertHandshake(int connection)
    {
        List<string> lines = Connections.GetValueOrDefault(connection) ?? [];
        foreach (string step in new[] { "TLS ClientHello", "TLS ServerHello", "TLS Finished", "HANDSHAKE_DONE" })
        {
            Check(lines.Exists(l => l.Contains(step, StringComparison.Ordinal)), $"conn={connection}: no {step}");
        }

        Check(lines.FindAll(l => l.Contains("TLS Finished", StringComparison.Ordinal)).Count >= 2, $"conn={connection}: the client's Finished is missing");
    }

    /// <summary>Fails with the capture's name and where its files are kept.</summary>
    public void Check(bool condition, string message)
    {
        Assert.True(condition, $"{Name}: {message} (capture {_pcap}, key log {_keys}, decode {Path.ChangeExtension(_pcap, ".txt")})");
    }

    private static SortedDictionary<int, List<string>> ParseConnections(string[] lines)
    {
        var connections = new SortedDictionary<int, List<string>>();
        List<string>? current = null;
        foreach (string line in lines)
        {
            Match m = ConnectionLine().Match(line);
            if (m.Success)
            {
                int number = int.Parse(m.Groups[1].Value, Globalization.CultureInfo.InvariantCulture);
                if (!connections.TryGetValue(number, out current))
                {
                    current = new List<string>();
                    connections.Add(number, current);
                }

                current.Add(line);
                continue;
            }

            if (line.StartsWith('#') || line.StartsWith("  [", StringComparison.Ordinal))
            {
                current = null;
                continue;
            }

            current?.Add(line);
        }

        return connections;
    }

    [GeneratedRegex(@"^\s+conn=(\d+) ")]
    private static partial Regex ConnectionLine();
}
