using System.Buffers.Binary;
using System.Diagnostics;

namespace System.Net.Quic.Managed.Tests.Dumper.Sequences;

/// <summary>UDP datagrams as a capture tool sees them on loopback (time, source, destination, payload), written as a
/// libpcap file with raw IPv4 frames (link type 101) for DatagramDumper --pcap. Thread-safe.</summary>
internal sealed class CaptureFile
{
    private readonly List<(long Ticks, IPEndPoint From, IPEndPoint To, byte[] Data)> _records = new();
    private readonly long _start = Stopwatch.GetTimestamp();

    public int Count
    {
        get
        {
            lock (_records) return _records.Count;
        }
    }

    /// <summary>Forgets <paramref name="count"/> datagrams from <paramref name="index"/> on: a capture that missed them.</summary>
    public void RemoveRange(int index, int count)
    {
        lock (_records) _records.RemoveRange(index, count);
    }

    /// <summary>Records <paramref name="count"/> datagrams from <paramref name="index"/> on a second time, later, at
    /// <paramref name="at"/>: a capture of both legs of a slow relay, whose copies lag the originals.</summary>
    public void RepeatRange(int index, int count, int at)
    {
        lock (_records) _records.InsertRange(at, _records.GetRange(index, count));
    }

    public void Add(IPEndPoint from, IPEndPoint to, ReadOnlySpan<byte> data)
    {
        byte[] copy = data.ToArray();
        lock (_records) _records.Add((Stopwatch.GetTimestamp(), from, to, copy));
    }

    public void Write(string path)
    {
        using var file = File.Create(path);
        Span<byte> header = stackalloc byte[24];
        header.Clear();
        BinaryPrimitives.WriteUInt32LittleEndian(header, 0xa1b2c3d4);
        BinaryPrimitives.WriteUInt16LittleEndian(header.Slice(4), 2);
        BinaryPrimitives.WriteUInt16LittleEndian(header.Slice(6), 4);
        BinaryPrimitives.WriteUInt32LittleEndian(header.Slice(16), 65535);
        BinaryPrimitives.WriteUInt32LittleEndian(header.Slice(20), 101); // LINKTYPE_RAW: the frame is the IP packet
        file.Write(header);
        Span<byte> record = stackalloc byte[16];
        lock (_records)
        {
            foreach ((long ticks, IPEndPoint from, IPEndPoint to, byte[] data) in _records)
            {
                long us = (long)((ticks - _start) * 1_000_000.0 / Stopwatch.Frequency);
                byte[] frame = new byte[20 + 8 + data.Length];
                frame[0] = 0x45;
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(2), (ushort)frame.Length);
                frame[8] = 64;
                frame[9] = 17; // UDP
                from.Address.MapToIPv4().TryWriteBytes(frame.AsSpan(12), out _);
                to.Address.MapToIPv4().TryWriteBytes(frame.AsSpan(16), out _);
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(20), (ushort)from.Port);
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(22), (ushort)to.Port);
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(24), (ushort)(8 + data.Length));
                data.CopyTo(frame.AsSpan(28));
                BinaryPrimitives.WriteUInt32LittleEndian(record, (uint)(us / 1_000_000));
                BinaryPrimitives.WriteUInt32LittleEndian(record.Slice(4), (uint)(us % 1_000_000));
                BinaryPrimitives.WriteUInt32LittleEndian(record.Slice(8), (uint)frame.Length);
                BinaryPrimitives.WriteUInt32LittleEndian(record.Slice(12), (uint)frame.Length);
                file.Write(record);
                file.Write(frame);
            }
        }
    }
}
