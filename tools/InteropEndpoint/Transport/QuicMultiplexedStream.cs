using System.Net.Quic.Managed;

namespace QuicManaged.Interop.Transport;

internal sealed class QuicMultiplexedStream : IMultiplexedStream
{
    private readonly QuicStream _stream;

    public QuicMultiplexedStream(QuicStream stream, bool bidirectional)
    {
        _stream = stream;
        IsBidirectional = bidirectional;
    }

    public Stream Stream => _stream;

    public bool IsBidirectional { get; }

    public long Id => _stream.Id;

    public void CompleteWrites() => _stream.CompleteWrites();

    public void Abort(long errorCode) => _stream.Abort(IsBidirectional ? QuicAbortDirection.Both : QuicAbortDirection.Read, errorCode);

    public ValueTask DisposeAsync() => _stream.DisposeAsync();
}
