using QuicManaged.Tools.DatagramDumper;

namespace System.Net.Quic.Managed.Tests.Dumper;

/// <summary>Exit codes: 2 with usage on stderr for bad arguments, 1 for unreadable input files, 0 otherwise.</summary>
public sealed class DumperArgumentTests
{
    [Theory]
    [InlineData("")]
    [InlineData("--bogus")]
    [InlineData("positional")]
    [InlineData("--hex")]
    [InlineData("--hex xyz")]
    [InlineData("--hex abc")]
    [InlineData("--sample rfc9999")]
    [InlineData("--sample rfc9001-client-initial --hex 00")]
    [InlineData("--sample rfc9001-client-initial --cid-len 21")]
    [InlineData("--sample rfc9001-client-initial --cid-len -1")]
    [InlineData("--sample rfc9001-client-initial --frame bogus")]
    [InlineData("--sample rfc9001-client-initial --odcid 00112233445566778899aabbccddeeff0011223344")]
    [InlineData("--sample rfc9001-client-initial --port 443")]
    [InlineData("--sample rfc9001-client-initial --binary")]
    [InlineData("--pcap x.pcap --port 70000")]
    public void BadArgumentsExitWithTwoAndUsage(string commandLine)
    {
        string[] args = commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        var output = new StringWriter();
        var error = new StringWriter();
        Assert.Equal(DumperCommand.UsageError, DumperCommand.Run(args, output, error));
        Assert.StartsWith("error: ", error.ToString());
        Assert.Contains("Usage:\n  DatagramDumper [options]", error.ToString().ReplaceLineEndings("\n"));
        Assert.Equal("", output.ToString());
    }

    [Theory]
    [InlineData("--file")]
    [InlineData("--pcap")]
    [InlineData("--keylog")]
    public void UnreadableFileExitsWithOne(string option)
    {
        string missing = Path.Combine(Path.GetTempPath(), "dumper-missing-" + Guid.NewGuid().ToString("N"));
        string[] args = option == "--keylog" ? ["--sample", "rfc9001-client-initial", "--keylog", missing] : [option, missing];
        var error = new StringWriter();
        Assert.Equal(DumperCommand.InputError, DumperCommand.Run(args, new StringWriter(), error));
        Assert.Contains("cannot read", error.ToString());
    }

    [Fact]
    public void HelpExitsWithZero()
    {
        var output = new StringWriter();
        Assert.Equal(DumperCommand.Success, DumperCommand.Run(["--help"], output, new StringWriter()));
        Assert.Contains("--keylog <PATH>", output.ToString());
    }

    [Fact]
    public void BinaryFileAndBadHexLinesAreHandled()
    {
        string binary = Path.GetTempFileName();
        string hex = Path.GetTempFileName();
        try
        {
            File.WriteAllBytes(binary, Convert.FromHexString(DumperGoldenTests.Rfc9001Hex(SampleDatagrams.Rfc9001ServerInitial)));
            Assert.Contains("TLS ServerHello", DumperGoldenTests.Run("--file", binary, "--binary", "--odcid", "8394c8f03e515708"));
            File.WriteAllText(hex, "zz not hex\n00\n");
            string text = DumperGoldenTests.Run("--file", hex);
            Assert.Contains("note: line 1: not valid hex, skipped", text);
            Assert.Contains("#2 len=1", text);
        }
        finally
        {
            File.Delete(binary);
            File.Delete(hex);
        }
    }
}
