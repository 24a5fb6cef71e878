using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// Bounds-checked reader for the TLS presentation language (RFC 8446 §3). Every method returns false instead of
/// throwing when the input is short, so attacker bytes can only ever produce a decode_error.
/// </summary>
internal ref struct TlsReader
{
    private readonly ReadOnlySpan<byte> _data;
    private int _position;

    public TlsReader(ReadOnlySpan<byte> data)
    {
        _data = data;
        _position = 0;
    }

    public readonly int Remaining => _data.Length - _position;

    public readonly bool IsEmpty => _position >= _data.Length;

    public bool TryReadUInt8(out byte value)
    {
        if (Remaining < 1) { value = 0; return false; }
        value = _data[_position++];
        return true;
    }

    public bool TryReadUInt16(out ushort value)
    {
        if (Remaining < 2) { value = 0; return false; }
        value = BinaryPrimitives.ReadUInt16BigEndian(_data.Slice(_position));
        _position += 2;
        return true;
    }

    public bool TryReadUInt24(out int value)
    {
        if (Remaining < 3) { value = 0; return false; }
        value = (_data[_position] << 16) | (_data[_position + 1] << 8) | _data[_position + 2];
        _position += 3;
        return true;
    }

    public bool TryReadUInt32(out uint value)
    {
        if (Remaining < 4) { value = 0; return false; }
        value = BinaryPrimitives.ReadUInt32BigEndian(_data.Slice(_position));
        _position += 4;
        return true;
    }

    public bool TryReadBytes(int count, out ReadOnlySpan<byte> value)
    {
        if (count < 0 || Remaining < count) { value = default; return false; }
        value = _data.Slice(_position, count);
        _position += count;
        return true;
    }

    /// <summary>Reads an opaque vector with a 1-byte length prefix.</summary>
    public bool TryReadVector8(out ReadOnlySpan<byte> value)
    {
        value = default;
        return TryReadUInt8(out byte length) && TryReadBytes(length, out value);
    }

    /// <summary>Reads an opaque vector with a 2-byte length prefix.</summary>
    public bool TryReadVector16(out ReadOnlySpan<byte> value)
    {
        value = default;
        return TryReadUInt16(out ushort length) && TryReadBytes(length, out value);
    }

    /// <summary>Reads an opaque vector with a 3-byte length prefix.</summary>
    public bool TryReadVector24(out ReadOnlySpan<byte> value)
    {
        value = default;
        return TryReadUInt24(out int length) && TryReadBytes(length, out value);
    }
}
