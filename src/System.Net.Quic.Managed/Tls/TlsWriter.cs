using System.Buffers.Binary;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// Growable big-endian writer for handshake messages (RFC 8446 §3). Vectors are written by reserving the length
/// prefix and patching it when the vector is closed, so nested structures need no second pass.
/// Handshake messages are written a handful of times per connection, so a plain growable array is enough.
/// </summary>
internal sealed class TlsWriter
{
    private byte[] _buffer;
    private int _length;

    public TlsWriter(int initialCapacity = 256) => _buffer = new byte[Math.Max(16, initialCapacity)];

    public int Length => _length;

    /// <summary>Bytes the buffer holds, used or not.</summary>
    public int Capacity => _buffer.Length;

    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _length);

    /// <summary>The written bytes, writable: used to patch PSK binders after the ClientHello is encoded.</summary>
    public Span<byte> WrittenSpanForPatching => _buffer.AsSpan(0, _length);

    public void Clear() => _length = 0;

    /// <summary>Empties the writer and lets its grown buffer go (it grows again if written to).</summary>
    public void ReleaseBuffer()
    {
        _length = 0;
        if (_buffer.Length > 16) _buffer = new byte[16];
    }

    public byte[] ToArray() => WrittenSpan.ToArray();

    private Span<byte> Grow(int count)
    {
        if (_length + count > _buffer.Length)
        {
            Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, _length + count));
        }
        Span<byte> span = _buffer.AsSpan(_length, count);
        _length += count;
        return span;
    }

    public void WriteUInt8(byte value) => Grow(1)[0] = value;

    public void WriteUInt16(ushort value) => BinaryPrimitives.WriteUInt16BigEndian(Grow(2), value);

    public void WriteUInt24(int value)
    {
        Span<byte> span = Grow(3);
        span[0] = (byte)(value >> 16);
        span[1] = (byte)(value >> 8);
        span[2] = (byte)value;
    }

    public void WriteUInt32(uint value) => BinaryPrimitives.WriteUInt32BigEndian(Grow(4), value);

    public void WriteBytes(ReadOnlySpan<byte> value) => value.CopyTo(Grow(value.Length));

    /// <summary>Reserves a length prefix of <paramref name="prefixBytes"/> (1, 2 or 3) and returns the mark for <see cref="EndVector"/>.</summary>
    public int BeginVector(int prefixBytes)
    {
        Grow(prefixBytes).Clear();
        return _length;
    }

    /// <summary>Patches the length prefix reserved by <see cref="BeginVector"/>.</summary>
    public void EndVector(int mark, int prefixBytes)
    {
        int length = _length - mark;
        Span<byte> prefix = _buffer.AsSpan(mark - prefixBytes, prefixBytes);
        int max = prefixBytes == 1 ? 0xff : prefixBytes == 2 ? 0xffff : 0xffffff;
        if (length > max) throw new InvalidOperationException("TLS vector too long.");
        for (int i = prefixBytes - 1; i >= 0; i--)
        {
            prefix[i] = (byte)length;
            length >>= 8;
        }
    }

    public void WriteVector8(ReadOnlySpan<byte> value)
    {
        int mark = BeginVector(1);
        WriteBytes(value);
        EndVector(mark, 1);
    }

    public void WriteVector16(ReadOnlySpan<byte> value)
    {
        int mark = BeginVector(2);
        WriteBytes(value);
        EndVector(mark, 2);
    }

    public void WriteVector24(ReadOnlySpan<byte> value)
    {
        int mark = BeginVector(3);
        WriteBytes(value);
        EndVector(mark, 3);
    }

    /// <summary>Starts a handshake message (RFC 8446 §4): type and a 3-byte length patched by <see cref="EndMessage"/>.</summary>
    public int BeginMessage(HandshakeType type)
    {
        WriteUInt8((byte)type);
        return BeginVector(3);
    }

    public void EndMessage(int mark) => EndVector(mark, 3);
}
