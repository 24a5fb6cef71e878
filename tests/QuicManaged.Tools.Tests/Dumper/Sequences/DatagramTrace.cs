using System.Diagnostics.Tracing;
using System.Net.Quic.Managed.Diagnostics;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

/// <summary>
/// Our stack's own datagram trace (QuicEventSource's DatagramSent events, in this process) as a capture: used where no
/// relay can stand between the two ends, i.e. when the server's preferred address (RFC 9000 §9.6), which the client
/// reaches directly, is part of the sequence. Both ends are ours, so every datagram on the wire was sent by one of them;
/// only datagrams from or to the given ports are kept (other tests run in parallel in this process).
/// </summary>
internal sealed class DatagramTrace : EventListener
{
    private const int DatagramSentEventId = 10;
    private readonly CaptureFile _capture;
    private readonly HashSet<int> _ports;

    public DatagramTrace(CaptureFile capture, params int[] ports)
    {
        _capture = capture;
        _ports = new HashSet<int>(ports);
        foreach (EventSource source in EventSource.GetSources())
        {
            if (source.Name == QuicEventSource.SourceName) EnableEvents(source, EventLevel.Verbose, QuicEventSource.Keywords.Datagrams);
        }
    }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        // Runs from the base constructor too, before the fields exist: the constructor enables the source again.
        if (eventSource.Name == QuicEventSource.SourceName && _ports != null) EnableEvents(eventSource, EventLevel.Verbose, QuicEventSource.Keywords.Datagrams);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventId != DatagramSentEventId || e.Payload is not { Count: 5 } payload || _ports == null) return;
        if (payload[1] is not string local || payload[2] is not string remote || payload[4] is not byte[] data) return;
        if (!IPEndPoint.TryParse(local, out IPEndPoint? from) || !IPEndPoint.TryParse(remote, out IPEndPoint? to)) return;
        if (!_ports.Contains(from.Port) && !_ports.Contains(to.Port)) return;
        _capture.Add(from, to, data);
    }
}
