using System.Diagnostics.Metrics;

namespace QuicManaged.Tools.QuicPerf;

/// <summary>
/// Reads the managed stack's process-wide counters through its public Meter ("System.Net.Quic.Managed"), so the tool
/// needs no internals. Counts both ends (client and server share the process).
/// </summary>
public sealed class ManagedWireCounters : IDisposable
{
    private readonly MeterListener _listener = new();
    private long _datagramsSent;
    private long _bytesSent;
    private long _packetsLost;
    private bool _seen;

    public ManagedWireCounters()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "System.Net.Quic.Managed"
                && instrument.Name is "quic.datagrams.sent" or "quic.bytes.sent" or "quic.packets.lost")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
        {
            _seen = true;
            switch (instrument.Name)
            {
                case "quic.datagrams.sent": _datagramsSent = value; break;
                case "quic.bytes.sent": _bytesSent = value; break;
                case "quic.packets.lost": _packetsLost = value; break;
            }
        });
        _listener.Start();
    }

    /// <summary>Datagrams sent, UDP payload bytes sent, packets declared lost; null when the meter is not published.</summary>
    public (long Datagrams, long Bytes, long Lost)? Read()
    {
        _listener.RecordObservableInstruments();
        return _seen ? (_datagramsSent, _bytesSent, _packetsLost) : null;
    }

    public void Dispose() => _listener.Dispose();
}
