using System.Buffers;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>The datagram handed to a <see cref="DatagramInterceptor"/>: mutable bytes plus where it is going.</summary>
internal sealed class InterceptedDatagram
{
    private byte[] _buffer = Array.Empty<byte>();

    public SimAddress From { get; private set; }

    public SimAddress To { get; private set; }

    public SimulatedLinkDirection Direction { get; private set; } = null!;

    /// <summary>0-based count of datagrams sent on <see cref="Direction"/> before this one.</summary>
    public long Index { get; private set; }

    public long NowUs { get; private set; }

    public int Length { get; private set; }

    /// <summary>The datagram bytes; edits are what the receiver gets.</summary>
    public Span<byte> Data => _buffer.AsSpan(0, Length);

    /// <summary>Truncates or extends (zero-filled) the datagram.</summary>
    public void Resize(int newLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(newLength);
        if (newLength > _buffer.Length)
        {
            byte[] bigger = ArrayPool<byte>.Shared.Rent(newLength);
            _buffer.AsSpan(0, Length).CopyTo(bigger);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = bigger;
        }

        if (newLength > Length)
        {
            _buffer.AsSpan(Length, newLength - Length).Clear();
        }

        Length = newLength;
    }

    public byte[] ToArray() => Data.ToArray();

    internal void Reset(byte[] buffer, int length, SimAddress from, SimAddress to, SimulatedLinkDirection direction, long index, long nowUs)
    {
        _buffer = buffer;
        Length = length;
        From = from;
        To = to;
        Direction = direction;
        Index = index;
        NowUs = nowUs;
    }

    /// <summary>Hands the (possibly re-rented) buffer back to the network and forgets it.</summary>
    internal byte[] TakeBuffer()
    {
        byte[] buffer = _buffer;
        _buffer = Array.Empty<byte>();
        Direction = null!;
        return buffer;
    }
}
