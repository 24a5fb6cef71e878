namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>Hand-encodes frames (possibly invalid ones) for <c>Connection.SendRawFramesForTesting</c>.</summary>
internal sealed class RawFrameBuilder
{
    private readonly List<byte> _bytes = new();

    /// <summary>RFC 9000 §16 variable-length integer in its shortest form.</summary>
    public RawFrameBuilder VarInt(ulong value)
    {
        if (value < 1UL << 6) _bytes.Add((byte)value);
        else if (value < 1UL << 14) Big(0x4000UL | value, 2);
        else if (value < 1UL << 30) Big(0x8000_0000UL | value, 4);
        else Big(0xC000_0000_0000_0000UL | value, 8);
        return this;
    }

    public RawFrameBuilder Bytes(ReadOnlySpan<byte> data)
    {
        foreach (byte b in data) _bytes.Add(b);
        return this;
    }

    public byte[] ToArray() => _bytes.ToArray();

    private void Big(ulong value, int length)
    {
        for (int i = length - 1; i >= 0; i--) _bytes.Add((byte)(value >> (8 * i)));
    }
}
