using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Toy endpoint: sends <see cref="Count"/> datagrams of <see cref="Size"/> bytes to <see cref="Target"/>, one every
/// <see cref="IntervalUs"/> from <see cref="StartUs"/> (interval 0 = all at once). Bytes 0..7 carry the big-endian
/// sequence number unless <see cref="NumberDatagrams"/> is false; the rest is <see cref="Fill"/>.
/// Everything it receives is recorded in <see cref="Received"/>.
/// </summary>
internal sealed class PacedSender : ISimulatedEndpoint
{
    private long _nextSendUs;
    private bool _started;

    public PacedSender(SimAddress target, int count, int size, long intervalUs, long startUs = 0)
    {
        Target = target;
        Count = count;
        Size = size;
        IntervalUs = intervalUs;
        StartUs = startUs;
    }

    public SimAddress Target { get; set; }

    public int Count { get; }

    public int Size { get; }

    public long IntervalUs { get; }

    public long StartUs { get; }

    public bool NumberDatagrams { get; set; } = true;

    public byte Fill { get; set; } = 0x5A;

    public int Sent { get; private set; }

    public List<long> SendTimesUs { get; } = new();

    public RecordingReceiver Received { get; } = new();

    public long NextTimeoutUs => Sent < Count ? (_started ? _nextSendUs : StartUs) : long.MaxValue;

    public void OnTimeout(long nowUs)
    {
        // Nothing to do here: the network polls TrySend right after, which sends what is due.
    }

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs) => Received.Receive(datagram, from, nowUs);

    public bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to)
    {
        to = Target;
        written = 0;
        if (!_started && nowUs >= StartUs)
        {
            _started = true;
            _nextSendUs = StartUs;
        }

        if (!_started || Sent >= Count || nowUs < _nextSendUs)
        {
            return false;
        }

        Span<byte> datagram = buffer.Slice(0, Size);
        datagram.Fill(Fill);
        if (NumberDatagrams && Size >= 8)
        {
            BinaryPrimitives.WriteInt64BigEndian(datagram, Sent);
        }

        SendTimesUs.Add(nowUs);
        Sent++;
        _nextSendUs += IntervalUs;
        written = Size;
        return true;
    }
}
