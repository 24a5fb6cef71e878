using System.Buffers.Binary;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>
/// The perf protocol on a stream: the client sends this 24-byte header and then <see cref="RequestBytes"/> bytes;
/// the server answers with <see cref="ResponseBytes"/> bytes (long.MaxValue: until the client stops reading).
/// Several requests may follow on one stream; <see cref="Last"/> makes the server finish its side after the answer.
/// </summary>
public readonly record struct PerfRequestHeader(long RequestBytes, long ResponseBytes, bool Last)
{
    public const int Size = 24;

    public const long Unlimited = long.MaxValue;

    public void Write(Span<byte> destination)
    {
        BinaryPrimitives.WriteInt64BigEndian(destination, Last ? 1 : 0);
        BinaryPrimitives.WriteInt64BigEndian(destination[8..], RequestBytes);
        BinaryPrimitives.WriteInt64BigEndian(destination[16..], ResponseBytes);
    }

    public static PerfRequestHeader Read(ReadOnlySpan<byte> source)
        => new(
            BinaryPrimitives.ReadInt64BigEndian(source[8..]),
            BinaryPrimitives.ReadInt64BigEndian(source[16..]),
            (BinaryPrimitives.ReadInt64BigEndian(source) & 1) != 0);

    public byte[] ToArray()
    {
        byte[] bytes = new byte[Size];
        Write(bytes);
        return bytes;
    }
}
