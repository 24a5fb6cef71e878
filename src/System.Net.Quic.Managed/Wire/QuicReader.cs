using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Wire;

/// <summary>A bounds-checked forward reader over received bytes. Every read is a Try: short input returns false and
/// leaves the position unchanged, never throws.</summary>
internal ref struct QuicReader
{
    private readonly ReadOnlySpan<byte> _buffer;
    private int _position;

    public QuicReader(ReadOnlySpan<byte> buffer)
    {
        _buffer = buffer;
        _position = 0;
    }

    /// <summary>The whole buffer this reader walks.</summary>
    public readonly ReadOnlySpan<byte> Buffer => _buffer;

    /// <summary>Bytes consumed so far.</summary>
    public readonly int Position => _position;

    /// <summary>Bytes not yet consumed.</summary>
    public readonly int Remaining => _buffer.Length - _position;

    /// <summary>True when every byte has been consumed.</summary>
    public readonly bool IsEmpty => _position >= _buffer.Length;

    /// <summary>The unconsumed bytes.</summary>
    public readonly ReadOnlySpan<byte> RemainingSpan => _buffer.Slice(_position);

    public readonly bool TryPeekByte(out byte value)
    {
        if (_position < _buffer.Length)
        {
            value = _buffer[_position];
            return true;
        }

        value = 0;
        return false;
    }

    public bool TryReadByte(out byte value)
    {
        if (_position < _buffer.Length)
        {
            value = _buffer[_position++];
            return true;
        }

        value = 0;
        return false;
    }

    public bool TryReadUInt16(out ushort value)
    {
        if (Remaining >= 2)
        {
            value = BinaryPrimitives.ReadUInt16BigEndian(_buffer.Slice(_position));
            _position += 2;
            return true;
        }

        value = 0;
        return false;
    }

    public bool TryReadUInt32(out uint value)
    {
        if (Remaining >= 4)
        {
            value = BinaryPrimitives.ReadUInt32BigEndian(_buffer.Slice(_position));
            _position += 4;
            return true;
        }

        value = 0;
        return false;
    }

    public bool TryReadUInt64(out ulong value)
    {
        if (Remaining >= 8)
        {
            value = BinaryPrimitives.ReadUInt64BigEndian(_buffer.Slice(_position));
            _position += 8;
            return true;
        }

        value = 0;
        return false;
    }

    /// <summary>Reads a variable-length integer. RFC 9000 §16.</summary>
    public bool TryReadVarInt(out ulong value) => TryReadVarInt(out value, out _);

    /// <summary>Reads a variable-length integer and reports how many bytes its encoding took.</summary>
    public bool TryReadVarInt(out ulong value, out int encodedLength)
    {
        if (VariableLengthInteger.TryRead(_buffer.Slice(_position), out value, out encodedLength))
        {
            _position += encodedLength;
            return true;
        }

        return false;
    }

    /// <summary>Reads a variable-length integer that is a length of following bytes, and those bytes.
    /// False when the length exceeds what remains (the length is never used to allocate).</summary>
    public bool TryReadLengthPrefixed(out ReadOnlySpan<byte> value)
    {
        int start = _position;
        if (TryReadVarInt(out ulong length) && length <= (ulong)Remaining)
        {
            value = _buffer.Slice(_position, (int)length);
            _position += (int)length;
            return true;
        }

        _position = start;
        value = default;
        return false;
    }

    /// <summary>Takes the next <paramref name="count"/> bytes as a slice of the buffer.</summary>
    public bool TryReadBytes(int count, out ReadOnlySpan<byte> value)
    {
        if (count >= 0 && count <= Remaining)
        {
            value = _buffer.Slice(_position, count);
            _position += count;
            return true;
        }

        value = default;
        return false;
    }

    /// <summary>Copies the next <paramref name="destination"/>.Length bytes.</summary>
    public bool TryCopyTo(Span<byte> destination)
    {
        if (destination.Length <= Remaining)
        {
            _buffer.Slice(_position, destination.Length).CopyTo(destination);
            _position += destination.Length;
            return true;
        }

        return false;
    }

    public bool TrySkip(int count)
    {
        if (count >= 0 && count <= Remaining)
        {
            _position += count;
            return true;
        }

        return false;
    }

    /// <summary>Consumes and returns everything that remains.</summary>
    public ReadOnlySpan<byte> ReadToEnd()
    {
        ReadOnlySpan<byte> rest = _buffer.Slice(_position);
        _position = _buffer.Length;
        return rest;
    }
}
