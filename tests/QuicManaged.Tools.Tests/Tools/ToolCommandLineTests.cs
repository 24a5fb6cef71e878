using System.CommandLine;
using QuicManaged.Tools.DatagramDumper;
using QuicManaged.Tools.LinkEmulator;
using QuicManaged.Tools.QuicLoad;
using QuicManaged.Tools.QuicPerf;

namespace System.Net.Quic.Managed.Tests.Tools;

/// <summary>
/// The tools' System.CommandLine command lines: the invocations of test.sh and the study scripts parse, bad
/// values are refused with a message, and each tool's README carries its current --help.
/// </summary>
public class ToolCommandLineTests
{
    [Fact]
    public void QuicPerfParsesTheInvocationsOfTheScripts()
    {
        Assert.True(PerfOptions.TryParse(["-t", "2"], QuicProvider.Managed, out PerfOptions o, out _));
        Assert.Equal(2.0, o.Seconds);
        Assert.False(o.Server);
        Assert.Null(o.ClientOf);
        Assert.Equal(18080, o.Port);
        Assert.Equal(1, o.Streams);
        Assert.Equal(16 * 1024 * 1024, o.StreamWindow);

        Assert.True(PerfOptions.TryParse(["-s", "-p", "18089"], QuicProvider.Managed, out o, out _));
        Assert.True(o.Server);
        Assert.Equal(18089, o.Port);

        Assert.True(PerfOptions.TryParse(["-c", "127.0.0.1", "-p", "18089", "-t", "2"], QuicProvider.Managed, out o, out _));
        Assert.Equal("127.0.0.1", o.ClientOf);
        Assert.Equal(18089, o.Port);
        Assert.Equal(2.0, o.Seconds);

        Assert.True(PerfOptions.TryParse(
            ["--seconds", "0.5", "--bytes", "64M", "--streams", "4", "--window", "1M", "--ipv6", "--cipher", "chacha20", "--cert", "rsa", "--port", "1"],
            QuicProvider.Managed,
            out o,
            out _));
        Assert.Equal(0.5, o.Seconds);
        Assert.Equal(64L << 20, o.Bytes);
        Assert.Equal(4, o.Streams);
        Assert.Equal(1 << 20, o.StreamWindow);
        Assert.True(o.IPv6);
        Assert.Equal(Security.TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256, o.Cipher);
        Assert.True(o.RsaCertificate);
        Assert.Equal(1, o.Port);
    }

    [Theory]
    [InlineData("-p 0", "bad value '0' for -p")]
    [InlineData("--port 65536", "bad value '65536' for --port")]
    [InlineData("-t 0", "bad value '0' for -t")]
    [InlineData("--bytes 0", "bad value '0' for --bytes")]
    [InlineData("--streams 1001", "bad value '1001' for --streams")]
    [InlineData("--window 3000", "bad value '3000' for --window")]
    [InlineData("--window 512", "bad value '512' for --window")]
    [InlineData("--provider quiche", "unknown provider 'quiche'")]
    [InlineData("--cipher aes512", "unknown cipher 'aes512'")]
    [InlineData("--cert dsa", "dsa")]
    [InlineData("-c -p", "bad value '-p' for -c")]
    [InlineData("-s -c localhost", "-s and -c exclude each other")]
    [InlineData("extra", "extra")]
    [InlineData("-p", "-p")]
    public void QuicPerfRefusesBadValuesWithAMessage(string commandLine, string message)
    {
        Assert.False(PerfOptions.TryParse(commandLine.Split(' '), QuicProvider.Managed, out _, out string error));
        Assert.Contains(message, error);
    }

    [Fact]
    public void QuicPerfHelpIsNotAnError()
    {
        Assert.False(PerfOptions.TryParse(["--help"], QuicProvider.Managed, out _, out string error));
        Assert.Equal("", error);
        Assert.False(PerfOptions.TryParse(["-h"], QuicProvider.Managed, out _, out error));
        Assert.Equal("", error);
    }

    [Fact]
    public void LinkEmulatorProbeParsesTheStudyScriptsInvocations()
    {
        Command command = EmulatorOptions.CreateCommand();
        Assert.Empty(command.Parse(["probe", "server", "--proto", "quic", "--listen", "10.200.2.1:4434"]).Errors);
        Assert.Empty(command.Parse(
            ["probe", "client", "--proto", "tcp", "--connect", "10.200.2.1:4433", "--sizes", "1024:5,1048576:3",
             "--timeout-s", "30", "--delay-label", "20", "--loss-label", "1", "--out", "results.csv"]).Errors);
        Assert.Empty(command.Parse(["--tun-a", "emuA", "--tun-b", "emuB", "--stats-json", "s.json", "--delay-ms", "10", "--loss", "0.01", "--seed", "1"]).Errors);
    }

    [Theory]
    [InlineData("probe")]
    [InlineData("probe server")]
    [InlineData("probe server --listen 10.200.2.1")]
    [InlineData("probe server --listen 10.200.2.1:4434 --proto udp")]
    [InlineData("probe client --connect 10.200.2.1:4433 --sizes 1k:3")]
    [InlineData("probe client --connect 10.200.2.1:4433 --timeout-s soon")]
    [InlineData("--seed 1.5")]
    [InlineData("--delay-ms x")]
    public void LinkEmulatorRefusesBadArguments(string commandLine)
    {
        Assert.NotEmpty(EmulatorOptions.CreateCommand().Parse(commandLine.Split(' ')).Errors);
    }

    [Fact]
    public void QuicLoadParsesEachMode()
    {
        Assert.True(LoadOptions.TryParse(["sequential", "2000"], QuicProvider.Managed, out LoadOptions o, out _));
        Assert.Equal(LoadMode.Sequential, o.Mode);
        Assert.Equal(2000, o.Count);
        Assert.Equal(1024, o.ResponseSize);
        Assert.Equal(QuicProvider.Managed, o.Provider);
        Assert.Equal(900, o.TimeLimitSeconds);

        Assert.True(LoadOptions.TryParse(["concurrent", "200", "10", "--size", "64K", "--provider", "msquic"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Concurrent, o.Mode);
        Assert.Equal(200, o.Count);
        Assert.Equal(10, o.StreamsPerConnection);
        Assert.Equal(64 * 1024, o.ResponseSize);
        Assert.Equal(QuicProvider.MsQuic, o.Provider);

        Assert.True(LoadOptions.TryParse(["streams", "100000", "--parallel", "50", "--size", "0"], QuicProvider.MsQuic, out o, out _));
        Assert.Equal(LoadMode.Streams, o.Mode);
        Assert.Equal(100_000, o.Count);
        Assert.Equal(50, o.Parallel);
        Assert.Equal(0, o.ResponseSize);
        Assert.Equal(QuicProvider.MsQuic, o.Provider); // the library's default decides without --provider

        Assert.True(LoadOptions.TryParse(["connections", "50", "--seconds", "20", "--json", "-"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Connections, o.Mode);
        Assert.Equal(50, o.Count);
        Assert.Equal(20, o.DurationSeconds);
        Assert.Equal(140, o.TimeLimitSeconds);
        Assert.Equal("-", o.JsonPath);

        Assert.True(LoadOptions.TryParse(["soak", "30", "--workers", "4", "--recycle", "50", "--max-seconds", "2000", "--warmup", "120", "--ipv6"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Soak, o.Mode);
        Assert.Equal(1800, o.DurationSeconds);
        Assert.Equal(4, o.Count);
        Assert.Equal(50, o.Recycle);
        Assert.Equal(2000, o.TimeLimitSeconds);
        Assert.Equal(120, o.WarmupSeconds);
        Assert.True(o.IPv6);

        Assert.True(LoadOptions.TryParse(["handshakes", "10", "--listener-sockets", "2"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Handshakes, o.Mode);
        Assert.Equal(10, o.DurationSeconds);
        Assert.Equal(16, o.Parallel);
        Assert.Equal(2, o.ListenerSockets);
        Assert.Equal(130, o.TimeLimitSeconds);
        Assert.False(o.RsaCertificate);
        Assert.True(LoadOptions.TryParse(["handshakes", "10", "--cert", "rsa"], QuicProvider.Managed, out o, out _));
        Assert.True(o.RsaCertificate);

        Assert.True(LoadOptions.TryParse(["serve", "--port", "4433", "--reuseport-group-size", "2", "--reuseport-group-index", "1", "--require-retry",
            "--stateless-reset-key", "000102030405060708090a0b0c0d0e0f", "--token-key", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Serve, o.Mode);
        Assert.Equal(4433, o.Port);
        Assert.Equal(2, o.ReusePortGroupSize);
        Assert.Equal(1, o.ReusePortGroupIndex);
        Assert.True(o.RequireRetry);
        Assert.Equal(Enumerable.Range(0, 16).Select(i => (byte)i), o.StatelessResetKey);
        Assert.Equal(17, o.TokenKey.Length);

        Assert.True(LoadOptions.TryParse(["slow-reader"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.SlowReader, o.Mode);
        Assert.Equal(10, o.Count);
        Assert.Equal(1000, o.StreamsPerConnection);
        Assert.Equal(1000, o.Parallel); // the server allows that many streams
        Assert.Equal(1 << 20, o.ResponseSize);
        Assert.Equal(10, o.DurationSeconds);
        Assert.Equal(64L << 20, o.MaxGrowthBytes);
        Assert.True(LoadOptions.TryParse(["slow-reader", "--connections", "2", "--streams", "50", "--size", "64K", "--seconds", "3", "--max-growth", "16M", "--provider", "msquic"],
            QuicProvider.Managed, out o, out _));
        Assert.Equal((2, 50, 64 * 1024, 3.0, 16L << 20, QuicProvider.MsQuic), (o.Count, o.StreamsPerConnection, o.ResponseSize, o.DurationSeconds, o.MaxGrowthBytes, o.Provider));

        Assert.True(LoadOptions.TryParse(["flood", "2000", "--parallel", "32"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Flood, o.Mode);
        Assert.Equal(2000, o.Count);
        Assert.Equal(32, o.Parallel);

        Assert.True(LoadOptions.TryParse(["idle", "2000"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.Idle, o.Mode);
        Assert.Equal((2000, 64 * 1024, 10.0, 5.0, 32), (o.Count, o.ResponseSize, o.DurationSeconds, o.IdleSeconds, o.Parallel));
        Assert.True(LoadOptions.TryParse(["idle", "0", "--seconds", "8", "--idle-seconds", "3", "--size", "1K", "--parallel", "64", "--provider", "msquic"], QuicProvider.Managed, out o, out _));
        Assert.Equal((0, 1024, 8.0, 3.0, 64, QuicProvider.MsQuic), (o.Count, o.ResponseSize, o.DurationSeconds, o.IdleSeconds, o.Parallel, o.Provider));

        Assert.True(LoadOptions.TryParse(["attack-client", "127.0.0.1:4433", "--attack", "flood", "--connections", "5", "--parallel", "2"], QuicProvider.Managed, out o, out _));
        Assert.Equal(LoadMode.AttackClient, o.Mode);
        Assert.Equal("127.0.0.1:4433", o.Target);
        Assert.Equal("flood", o.Attack);
        Assert.Equal((5, 2), (o.Count, o.Parallel));
    }

    [Theory]
    [InlineData("", "command")]
    [InlineData("sequential", "Required argument missing")]
    [InlineData("sequential 0", "bad value '0' for N")]
    [InlineData("concurrent 10", "Required argument missing")]
    [InlineData("streams 10 --size 2G", "bad value '2G' for --size")]
    [InlineData("soak 1 --provider quiche", "unknown provider 'quiche'")]
    [InlineData("soak -1", "-1")]
    [InlineData("connections 5 --seconds 0", "bad value '0' for --seconds")]
    [InlineData("sequential 5 extra", "extra")]
    [InlineData("handshakes 5 --parallel 0", "bad value '0' for --parallel")]
    [InlineData("handshakes 5 --cert dsa", "'dsa'")]
    [InlineData("handshakes 5 --provider msquic --listener-sockets 2", "managed provider option")]
    [InlineData("connections 8 --listener-sockets 0", "bad value '0' for --listener-sockets")]
    [InlineData("serve --provider msquic", "managed provider only")]
    [InlineData("serve --stateless-reset-key 0011", "bad value '0011' for --stateless-reset-key")]
    [InlineData("serve --token-key xyz", "bad value 'xyz' for --token-key")]
    [InlineData("serve --port 70000", "bad value '70000' for --port")]
    [InlineData("slow-reader --streams 0", "bad value '0' for --streams")]
    [InlineData("slow-reader --max-growth 1X", "bad value '1X' for --max-growth")]
    [InlineData("slow-reader --seconds 0", "bad value '0' for --seconds")]
    [InlineData("idle", "Required argument missing")]
    [InlineData("idle -1", "-1")]
    [InlineData("idle 10 --idle-seconds 0", "bad value '0' for --idle-seconds")]
    [InlineData("flood", "Required argument missing")]
    [InlineData("flood 0", "bad value '0' for N")]
    [InlineData("attack-client nowhere", "bad address 'nowhere'")]
    [InlineData("attack-client 127.0.0.1:1 --attack replay", "'replay'")]
    public void QuicLoadRefusesBadValuesWithAMessage(string commandLine, string message)
    {
        Assert.False(LoadOptions.TryParse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries), QuicProvider.Managed, out _, out string error));
        Assert.Contains(message, error);
    }

    [Fact]
    public void EachToolsReadmeCarriesItsCurrentHelp()
    {
        string root = RepositoryRoot();
        // The README shows the help of a process without DOTNET_SYSTEM_NET_QUIC_PROVIDER (default provider: managed).
        AssertReadmeContains(Path.Combine(root, "tools/QuicPerf/README.md"), PerfOptions.UsageFor(QuicProvider.Managed));
        AssertReadmeContains(Path.Combine(root, "tools/DatagramDumper/README.md"), DumperArguments.Usage);
        Command emulator = EmulatorOptions.CreateCommand();
        string readme = Path.Combine(root, "tools/LinkEmulator/README.md");
        AssertReadmeContains(readme, Help(emulator, "--help"));
        AssertReadmeContains(readme, Help(emulator, "probe", "server", "--help"));
        AssertReadmeContains(readme, Help(emulator, "probe", "client", "--help"));
        string load = Path.Combine(root, "tools/QuicLoad/README.md");
        AssertReadmeContains(load, LoadOptions.Usage);
        foreach (string mode in LoadOptions.ModeNames) AssertReadmeContains(load, LoadOptions.HelpText([mode]));
    }

    private static string Help(Command command, params string[] args)
    {
        var text = new StringWriter();
        Assert.Equal(0, command.Parse(args).Invoke(new InvocationConfiguration { Output = text, Error = text }));
        return text.ToString();
    }

    private static void AssertReadmeContains(string path, string help)
    {
        // The README's copy has no trailing blanks (the help wraps lines with one).
        static string Normalize(string text) => string.Join('\n', text.ReplaceLineEndings("\n").Split('\n').Select(l => l.TrimEnd())).Trim();
        // The whole help, in a code block of its own.
        Assert.Contains("```\n" + Normalize(help) + "\n```", Normalize(File.ReadAllText(path)));
    }

    private static string RepositoryRoot()
    {
        for (DirectoryInfo? d = new(AppContext.BaseDirectory); d is not null; d = d.Parent)
        {
            if (File.Exists(Path.Combine(d.FullName, "QuicManaged.sln"))) return d.FullName;
        }

        throw new InvalidOperationException("QuicManaged.sln not found above " + AppContext.BaseDirectory);
    }
}
