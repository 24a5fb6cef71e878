using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed;

/// <summary>
/// What a stream's read side still holds when its connection ends (closed by either side, drained, timed out): the
/// bytes that arrived in order and were not yet read, and whether the FIN came after them. Taken from the core on the
/// driver thread at the end, then read without the driver (its socket and thread are released once the closing period
/// is over, whether or not the app disposes the connection). Reads return the bytes, then end of stream when the FIN
/// had arrived, else fail with the connection's exception. Any thread, one read at a time (the stream enforces it).
/// </summary>
internal sealed class EndedStreamReads
{
    private readonly object _gate = new();
    private readonly byte[] _data;
    private readonly int _length;
    private int _offset;

    private EndedStreamReads(byte[] data, int length, bool fin, Exception exception)
    {
        _data = data;
        _length = length;
        Fin = fin;
        Exception = exception;
    }

    /// <summary>The FIN had arrived: after the buffered bytes, reads report end of stream.</summary>
    public bool Fin { get; }

    /// <summary>Why the connection ended: reads fail with it once the buffered bytes are read (when no FIN arrived).</summary>
    public Exception Exception { get; }

    /// <summary>Driver thread: takes everything readable on stream <paramref name="streamId"/> out of the core.</summary>
    public static EndedStreamReads Take(Connection core, long streamId, Exception exception)
    {
        byte[] data = new byte[(int)Math.Min(int.MaxValue, core.GetReadableBytes(streamId))];
        int length = 0;
        bool fin;
        while (true)
        {
            int n = core.ReadStream(streamId, data.AsSpan(length), out fin, out bool reset, out _);
            if (reset)
            {
                // Reset by the peer before the end: what was buffered is discarded as on an open connection.
                return new EndedStreamReads(Array.Empty<byte>(), 0, fin: false, exception);
            }
            length += n;
            if (fin || n == 0 || length == data.Length) break;
        }
        // The FIN right after the last byte is only reported by a further read.
        if (!fin && length == data.Length) core.ReadStream(streamId, Span<byte>.Empty, out fin, out _, out _);
        return new EndedStreamReads(data, length, fin, exception);
    }

    /// <summary>Bytes copied (more than 0), 0 at the end of a finished stream, or -1 when the stream will not finish.</summary>
    public int Read(Span<byte> destination)
    {
        lock (_gate)
        {
            int n = Math.Min(destination.Length, _length - _offset);
            if (n > 0)
            {
                _data.AsSpan(_offset, n).CopyTo(destination);
                _offset += n;
                return n;
            }
            return _offset == _length && Fin ? 0 : -1;
        }
    }

    /// <summary>True once every buffered byte was read.</summary>
    public bool IsDrained
    {
        get
        {
            lock (_gate) return _offset == _length;
        }
    }
}
