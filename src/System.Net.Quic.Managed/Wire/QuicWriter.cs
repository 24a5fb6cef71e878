using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Wire;

/// <summary>A bounds-checked forward writer into a caller-owned buffer. Every write is a Try: when the value does not
/// fit it returns false and writes nothing.</summary>
internal ref struct QuicWriter
{
    private readonly Span<byte> _buffer;
    private int _position;

    public QuicWriter(Span<byte> buffer)
    {
        _buffer = buffer;
        _position = 0;
    }

    /// <summary>The whole destination buffer.</summary>
    public readonly Span<byte> Buffer => _buffer;

    /// <summary>Bytes written so far.</summary>
    public readonly int Position => _position;

    /// <summary>Space left.</summary>
    public readonly int Remaining => _buffer.Length - _position;

    /// <summary>The bytes written so far.</summary>
    public readonly Span<byte> Written => _buffer.Slice(0, _position);

    /// <summary>The space not yet written.</summary>
    public readonly Span<byte> RemainingSpan => _buffer.Slice(_position);

    public bool TryWriteByte(byte value)
    {
        if (_position < _buffer.Length)
        {
            _buffer[_position++] = value;
            return true;
        }

        return false;
    }

    public bool TryWriteUInt16(ushort value)
    {
        if (Remaining >= 2)
        {
            BinaryPrimitives.WriteUInt16BigEndian(_buffer.Slice(_position), value);
            _position += 2;
            return true;
        }

        return false;
    }

    public bool TryWriteUInt32(uint value)
    {
        if (Remaining >= 4)
        {
            BinaryPrimitives.WriteUInt32BigEndian(_buffer.Slice(_position), value);
            _position += 4;
            return true;
        }

        return false;
    }

    public bool TryWriteUInt64(ulong value)
    {
        if (Remaining >= 8)
        {
            BinaryPrimitives.WriteUInt64BigEndian(_buffer.Slice(_position), value);
            _position += 8;
            return true;
        }

        return false;
    }

    /// <summary>Writes the minimal variable-length encoding. RFC 9000 §16.</summary>
    public bool TryWriteVarInt(ulong value)
    {
        if (VariableLengthInteger.TryWrite(_buffer.Slice(_position), value, out int written))
        {
            _position += written;
            return true;
        }

        return false;
    }

    /// <summary>Writes a variable-length integer in exactly <paramref name="length"/> bytes (1, 2, 4 or 8).</summary>
    public bool TryWriteVarInt(ulong value, int length)
    {
        if (VariableLengthInteger.TryWrite(_buffer.Slice(_position), value, length))
        {
            _position += length;
            return true;
        }

        return false;
    }

    public bool TryWriteBytes(scoped ReadOnlySpan<byte> value)
    {
        if (value.Length <= Remaining)
        {
            value.CopyTo(_buffer.Slice(_position));
            _position += value.Length;
            return true;
        }

        return false;
    }

    /// <summary>Writes a varint length followed by the bytes.</summary>
    public bool TryWriteLengthPrefixed(scoped ReadOnlySpan<byte> value)
    {
        int needed = VariableLengthInteger.GetEncodedLength((ulong)value.Length) + value.Length;
        if (needed > Remaining)
        {
            return false;
        }

        TryWriteVarInt((ulong)value.Length);
        TryWriteBytes(value);
        return true;
    }

    /// <summary>Writes <paramref name="count"/> copies of <paramref name="value"/>.</summary>
    public bool TryFill(byte value, int count)
    {
        if (count >= 0 && count <= Remaining)
        {
            _buffer.Slice(_position, count).Fill(value);
            _position += count;
            return true;
        }

        return false;
    }

    /// <summary>Hands out the next <paramref name="count"/> bytes for the caller to fill now or patch later
    /// (a Length field, a packet number, a tag).</summary>
    public bool TryReserve(int count, out Span<byte> reserved)
    {
        if (count >= 0 && count <= Remaining)
        {
            reserved = _buffer.Slice(_position, count);
            _position += count;
            return true;
        }

        reserved = default;
        return false;
    }
}
