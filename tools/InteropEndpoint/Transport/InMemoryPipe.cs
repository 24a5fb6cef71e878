using System.Threading.Channels;

namespace QuicManaged.Interop.Transport;

/// <summary>One direction of an in-memory stream: written chunks are copied into a channel; completion is FIN, a fault is a reset.</summary>
internal sealed class InMemoryPipe
{
    private readonly Channel<byte[]> _chunks = Channel.CreateUnbounded<byte[]>(new UnboundedChannelOptions { SingleReader = true });
    private byte[]? _current;
    private int _currentOffset;

    public void Write(ReadOnlySpan<byte> data)
    {
        if (data.IsEmpty)
        {
            return;
        }

        if (!_chunks.Writer.TryWrite(data.ToArray()))
        {
            throw new IOException("The write side of the in-memory stream is closed.");
        }
    }

    public void Complete() => _chunks.Writer.TryComplete();

    public void Fault(long errorCode) => _chunks.Writer.TryComplete(new IOException($"In-memory stream aborted with error code 0x{errorCode:x}."));

    public async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (destination.IsEmpty)
        {
            return 0;
        }

        while (_current is null || _currentOffset == _current.Length)
        {
            try
            {
                if (!await _chunks.Reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
                {
                    return 0;
                }
            }
            catch (ChannelClosedException e)
            {
                throw e.InnerException as IOException ?? new IOException("In-memory stream aborted.", e);
            }

            if (_chunks.Reader.TryRead(out byte[]? chunk))
            {
                _current = chunk;
                _currentOffset = 0;
            }
        }

        int n = Math.Min(destination.Length, _current.Length - _currentOffset);
        _current.AsSpan(_currentOffset, n).CopyTo(destination.Span);
        _currentOffset += n;
        return n;
    }
}
