namespace QuicManaged.Tools.DatagramDumper;

/// <summary>Reassembles one direction's CRYPTO stream at one encryption level (RFC 9000 §19.6, §7.5) so TLS handshake
/// messages that straddle frames or packets can be decoded. Out-of-order data waits until the gap fills. Memory is
/// bounded: data beyond <see cref="MaxBufferedBytes"/> past the read position is dropped, never allocated from a
/// size taken off the wire.</summary>
internal sealed class CryptoStreamBuffer
{
    public const int MaxBufferedBytes = 1 << 20;

    // TLS handshake message header: 1-byte type, 3-byte length. RFC 8446 §4.
    private const int HandshakeHeaderLength = 4;

    private readonly SortedDictionary<ulong, byte[]> _pending = new();
    private byte[] _data = new byte[256];
    private ulong _base;     // stream offset of _data[0]
    private int _length;     // contiguous bytes held in _data
    private int _readPosition;
    private int _pendingBytes;

    /// <summary>True once a message claimed a length beyond the buffer limit: the stream cannot be followed further.</summary>
    public bool Broken { get; private set; }

    /// <summary>Stream offset up to which data has arrived contiguously.</summary>
    public ulong ContiguousEnd => _base + (ulong)_length;

    public void Add(ulong offset, ReadOnlySpan<byte> data)
    {
        if (Broken || data.IsEmpty) return;
        ulong end = offset + (ulong)data.Length;
        if (end <= ContiguousEnd) return;
        if (offset > ContiguousEnd)
        {
            if (offset - ContiguousEnd > MaxBufferedBytes || _pendingBytes + data.Length > MaxBufferedBytes) return;
            if (!_pending.ContainsKey(offset))
            {
                _pending.Add(offset, data.ToArray());
                _pendingBytes += data.Length;
            }

            return;
        }

        Append(data.Slice((int)(ContiguousEnd - offset)));
        DrainPending();
    }

    /// <summary>Takes the next complete handshake message (header included), if all of it has arrived.</summary>
    public bool TryTakeMessage(out byte[] message)
    {
        message = [];
        int available = _length - _readPosition;
        if (Broken || available < HandshakeHeaderLength) return false;
        ReadOnlySpan<byte> header = _data.AsSpan(_readPosition, HandshakeHeaderLength);
        int bodyLength = (header[1] << 16) | (header[2] << 8) | header[3];
        if (bodyLength > MaxBufferedBytes)
        {
            Broken = true;
            return false;
        }

        if (available < HandshakeHeaderLength + bodyLength) return false;
        message = _data.AsSpan(_readPosition, HandshakeHeaderLength + bodyLength).ToArray();
        _readPosition += HandshakeHeaderLength + bodyLength;
        if (_readPosition == _length)
        {
            _base += (ulong)_length;
            _length = 0;
            _readPosition = 0;
        }

        return true;
    }

    private void Append(ReadOnlySpan<byte> data)
    {
        if (_length + data.Length > MaxBufferedBytes + HandshakeHeaderLength)
        {
            Broken = true;
            return;
        }

        if (_length + data.Length > _data.Length)
        {
            Array.Resize(ref _data, Math.Max(_data.Length * 2, _length + data.Length));
        }

        data.CopyTo(_data.AsSpan(_length));
        _length += data.Length;
    }

    private void DrainPending()
    {
        while (_pending.Count > 0 && !Broken)
        {
            ulong first = default;
            byte[] chunk = [];
            foreach (KeyValuePair<ulong, byte[]> entry in _pending)
            {
                first = entry.Key;
                chunk = entry.Value;
                break;
            }

            if (first > ContiguousEnd) return;
            _pending.Remove(first);
            _pendingBytes -= chunk.Length;
            ulong end = first + (ulong)chunk.Length;
            if (end > ContiguousEnd)
            {
                Append(chunk.AsSpan((int)(ContiguousEnd - first)));
            }
        }
    }
}
