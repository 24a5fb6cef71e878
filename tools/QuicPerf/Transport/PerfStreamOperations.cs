using ManagedAbortDirection = System.Net.Quic.Managed.QuicAbortDirection;
using ManagedQuicStream = System.Net.Quic.Managed.QuicStream;
using MsQuicAbortDirection = System.Net.Quic.QuicAbortDirection;
using MsQuicStream = System.Net.Quic.QuicStream;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>The few operations that differ between a QUIC stream (FIN, abort) and an SslStream.</summary>
public static class PerfStreamOperations
{
    /// <summary>Writes, and for QUIC sends FIN with the last bytes when <paramref name="completeWrites"/>.</summary>
    public static ValueTask WriteAsync(Stream stream, ReadOnlyMemory<byte> data, bool completeWrites, CancellationToken cancellationToken)
        => stream switch
        {
            ManagedQuicStream managed => managed.WriteAsync(data, completeWrites, cancellationToken),
            MsQuicStream msquic => msquic.WriteAsync(data, completeWrites, cancellationToken),
            _ => stream.WriteAsync(data, cancellationToken),
        };

    /// <summary>Stops reading: STOP_SENDING for QUIC (the peer's writes fail), closing the connection for TCP.</summary>
    public static void AbortRead(Stream stream)
    {
        switch (stream)
        {
            case ManagedQuicStream managed:
                managed.Abort(ManagedAbortDirection.Read, 0);
                break;
            case MsQuicStream msquic:
                msquic.Abort(MsQuicAbortDirection.Read, 0);
                break;
            default:
                stream.Dispose();
                break;
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes into (reused) <paramref name="buffer"/>; false on early EOF.</summary>
    public static async ValueTask<bool> DiscardExactlyAsync(Stream stream, long count, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (count > 0)
        {
            int n = await stream.ReadAsync(count < buffer.Length ? buffer[..(int)count] : buffer, cancellationToken).ConfigureAwait(false);
            if (n == 0) return false;
            count -= n;
        }
        return true;
    }

    /// <summary>Writes <paramref name="count"/> bytes from the repeated <paramref name="chunk"/>.</summary>
    public static async ValueTask WriteRepeatedAsync(Stream stream, long count, ReadOnlyMemory<byte> chunk, bool completeWrites, CancellationToken cancellationToken)
    {
        if (count == 0)
        {
            if (completeWrites) await WriteAsync(stream, ReadOnlyMemory<byte>.Empty, true, cancellationToken).ConfigureAwait(false);
            return;
        }
        while (count > 0)
        {
            int n = count < chunk.Length ? (int)count : chunk.Length;
            count -= n;
            await WriteAsync(stream, chunk[..n], completeWrites && count == 0, cancellationToken).ConfigureAwait(false);
        }
    }
}
