using System.Text.Encodings.Web;
using System.Text.Json;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>Writes the per-direction counters as JSON (atomically replaced: written to a temp file, then renamed).</summary>
internal static class StatsReport
{
    public static void WriteFile(string path, EmulatorOptions options, LinkDirection aToB, LinkDirection bToA, double elapsedSeconds, bool final)
    {
        string temp = path + ".tmp";
        using (FileStream stream = File.Create(temp))
        {
            Write(stream, options, aToB, bToA, elapsedSeconds, final);
        }

        File.Move(temp, path, overwrite: true);
    }

    public static void Write(Stream stream, EmulatorOptions options, LinkDirection aToB, LinkDirection bToA, double elapsedSeconds, bool final)
    {
        using var w = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
        w.WriteStartObject();
        w.WriteNumber("elapsedSeconds", Math.Round(elapsedSeconds, 3));
        w.WriteBoolean("final", final);
        w.WriteNumber("seed", options.Seed);
        ImpairmentOptions i = options.Impairment;
        w.WriteStartObject("impairment");
        w.WriteNumber("delayUs", i.DelayUs);
        w.WriteNumber("jitterUs", i.JitterUs);
        w.WriteNumber("lossProbability", i.LossProbability);
        w.WriteNumber("burstGoodToBad", i.BurstGoodToBad);
        w.WriteNumber("burstBadToGood", i.BurstBadToGood);
        w.WriteNumber("burstLossInBad", i.BurstLossInBad);
        w.WriteNumber("burstLossInGood", i.BurstLossInGood);
        w.WriteNumber("reorderProbability", i.ReorderProbability);
        w.WriteNumber("reorderGapUs", i.ReorderGapUs);
        w.WriteNumber("rateBitsPerSecond", i.RateBitsPerSecond);
        w.WriteNumber("queueLimitBytes", i.QueueLimitBytes);
        w.WriteEndObject();
        WriteDirection(w, options.TunA + "->" + options.TunB, aToB);
        WriteDirection(w, options.TunB + "->" + options.TunA, bToA);
        w.WriteEndObject();
    }

    private static void WriteDirection(Utf8JsonWriter w, string name, LinkDirection d)
    {
        DirectionCounters c = d.Counters;
        w.WriteStartObject(name);
        w.WriteNumber("packetsIn", c.PacketsIn);
        w.WriteNumber("bytesIn", c.BytesIn);
        w.WriteNumber("packetsForwarded", c.PacketsForwarded);
        w.WriteNumber("bytesForwarded", c.BytesForwarded);
        w.WriteNumber("droppedLoss", c.DroppedLoss);
        w.WriteNumber("droppedBurstLoss", c.DroppedBurstLoss);
        w.WriteNumber("droppedQueueFull", c.DroppedQueueFull);
        w.WriteNumber("droppedWriteError", c.DroppedWriteError);
        w.WriteNumber("droppedTotal", c.DroppedTotal);
        w.WriteNumber("delayed", c.Delayed);
        w.WriteNumber("reordered", c.Reordered);
        w.WriteNumber("meanAddedDelayUs", Math.Round(c.MeanDelayUs, 1));
        w.WriteNumber("meanReleaseLatenessUs", Math.Round(c.MeanLatenessUs, 1));
        w.WriteNumber("maxReleaseLatenessUs", c.MaxLatenessUs);
        w.WriteNumber("maxQueueBytes", c.MaxQueueBytes);
        w.WriteNumber("queuedNow", d.QueuedPackets);
        w.WriteEndObject();
    }
}
