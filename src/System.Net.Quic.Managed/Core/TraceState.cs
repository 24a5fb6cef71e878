using System.Collections.Generic;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What one connection reports to its qlog tracer and the EventSource: the tracer, the frame types of the packet
/// being received, the event name of the connection, the last path sample reported to the counters, and the time of
/// the last event.
/// </summary>
internal sealed class TraceState
{
    public IConnectionTracer? Tracer;

    public List<ulong>? FrameTypes;

    public string? EventConnectionId;

    public long LastReportedRttUs;

    public long LastReportedCwnd;

    public long LastEventUs;
}
