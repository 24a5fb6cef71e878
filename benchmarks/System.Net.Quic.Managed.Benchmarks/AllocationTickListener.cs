using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>Profiling aid for <see cref="ProfileLoop"/>: counts the runtime's allocation samples (one per ~100 KB) by type.</summary>
internal sealed class AllocationTickListener : EventListener
{
    public readonly ConcurrentDictionary<string, long> Samples = new();

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime") EnableEvents(source, EventLevel.Verbose, (EventKeywords)0x1);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventName is null || !e.EventName.StartsWith("GCAllocationTick", StringComparison.Ordinal) || e.Payload is null) return;
        int i = e.PayloadNames!.IndexOf("TypeName");
        string type = i >= 0 ? e.Payload[i] as string ?? "?" : "?";
        int j = e.PayloadNames!.IndexOf("ObjectSize");
        if (type == "System.Byte[]" && j >= 0) type += " " + e.Payload[j];
        Samples.AddOrUpdate(type, 1, static (_, n) => n + 1);
    }
}
