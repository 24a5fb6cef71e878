using System.Text.Json;
using QuicManaged.Tools.LinkEmulator;

namespace System.Net.Quic.Managed.Tests.LinkEmulator;

public class EmulatorOptionsTests
{
    [Fact]
    public void ParsesUnitsIntoMicrosecondsBitsAndBytes()
    {
        EmulatorOptions o = EmulatorOptions.Parse(
            ["--tun-a", "x0", "--tun-b", "x1", "--delay-ms", "12.5", "--jitter-ms", "1", "--loss", "0.01", "--rate-mbit", "2.5",
             "--queue-kb", "64", "--seed", "9", "--reorder", "0.02", "--reorder-gap-ms", "3", "--ge-p", "0.1", "--ge-r", "0.5",
             "--duration-s", "4", "--stats-json", "/tmp/s.json"]);
        Assert.Equal("x0", o.TunA);
        Assert.Equal("x1", o.TunB);
        Assert.Equal(12_500, o.Impairment.DelayUs);
        Assert.Equal(1000, o.Impairment.JitterUs);
        Assert.Equal(0.01, o.Impairment.LossProbability);
        Assert.Equal(2_500_000, o.Impairment.RateBitsPerSecond);
        Assert.Equal(65_536, o.Impairment.QueueLimitBytes);
        Assert.Equal(9, o.Seed);
        Assert.Equal(0.02, o.Impairment.ReorderProbability);
        Assert.Equal(3000, o.Impairment.ReorderGapUs);
        Assert.True(o.Impairment.BurstLossEnabled);
        Assert.Equal(0.5, o.Impairment.BurstBadToGood);
        Assert.Equal(4.0, o.DurationSeconds);
        Assert.Equal("/tmp/s.json", o.StatsJsonPath);
    }

    [Theory]
    [InlineData("--loss", "1.5")]
    [InlineData("--loss", "-0.1")]
    [InlineData("--delay-ms", "-1")]
    [InlineData("--bogus", "1")]
    [InlineData("--delay-ms", null)]
    public void RejectsInvalidArguments(string name, string? value)
    {
        string[] args = value is null ? [name] : [name, value];
        Assert.Throws<ArgumentException>(() => EmulatorOptions.Parse(args));
    }

    [Fact]
    public void StatsJsonCarriesTheCountersOfBothDirections()
    {
        EmulatorOptions o = EmulatorOptions.Parse(["--delay-ms", "5", "--loss", "0.5", "--seed", "2"]);
        var random = new Random(o.Seed);
        var ab = new LinkDirection(o.Impairment.Clone(), random);
        var ba = new LinkDirection(o.Impairment.Clone(), random);
        for (int i = 0; i < 100; i++)
        {
            ab.Submit(new byte[64], i);
        }

        ba.Submit(new byte[10], 0);
        using var stream = new MemoryStream();
        StatsReport.Write(stream, o, ab, ba, 1.5, final: true);
        using JsonDocument doc = JsonDocument.Parse(stream.ToArray());
        JsonElement a = doc.RootElement.GetProperty("emuA->emuB");
        Assert.Equal(100, a.GetProperty("packetsIn").GetInt64());
        Assert.Equal(ab.Counters.DroppedLoss, a.GetProperty("droppedLoss").GetInt64());
        Assert.Equal(100 - ab.Counters.DroppedLoss, a.GetProperty("queuedNow").GetInt64());
        Assert.Equal(1, doc.RootElement.GetProperty("emuB->emuA").GetProperty("packetsIn").GetInt64());
        Assert.Equal(5000, doc.RootElement.GetProperty("impairment").GetProperty("delayUs").GetInt64());
        Assert.True(doc.RootElement.GetProperty("final").GetBoolean());
    }
}
