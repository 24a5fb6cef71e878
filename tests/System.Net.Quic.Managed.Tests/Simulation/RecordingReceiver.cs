using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Toy endpoint that records every arrival; optionally echoes each datagram back to its source.</summary>
internal sealed class RecordingReceiver : ISimulatedEndpoint
{
    private readonly Queue<(byte[] Data, SimAddress To)> _echoes = new();

    public bool Echo { get; set; }

    public List<DatagramArrival> Arrivals { get; } = new();

    public long NextTimeoutUs => long.MaxValue;

    public void OnTimeout(long nowUs)
    {
    }

    public void Receive(ReadOnlySpan<byte> datagram, SimAddress from, long nowUs)
    {
        long sequence = datagram.Length >= 8 ? BinaryPrimitives.ReadInt64BigEndian(datagram) : -1;
        byte[] data = datagram.ToArray();
        Arrivals.Add(new DatagramArrival(nowUs, sequence, data, from));
        if (Echo)
        {
            _echoes.Enqueue((data, from));
        }
    }

    public bool TrySend(Span<byte> buffer, long nowUs, out int written, out SimAddress to)
    {
        if (_echoes.TryDequeue(out (byte[] Data, SimAddress To) echo))
        {
            echo.Data.CopyTo(buffer);
            written = echo.Data.Length;
            to = echo.To;
            return true;
        }

        written = 0;
        to = default;
        return false;
    }
}
