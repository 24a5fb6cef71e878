namespace QuicManaged.Interop.Transport;

/// <summary>What HTTP/3 and hq-interop need from a QUIC connection: open, accept and close. QUIC or in-memory.</summary>
internal interface IMultiplexedConnection : IAsyncDisposable
{
    ValueTask<IMultiplexedStream> OpenStreamAsync(bool bidirectional, CancellationToken cancellationToken);

    /// <summary>The next stream the peer opened; null once the connection is closed.</summary>
    ValueTask<IMultiplexedStream?> AcceptStreamAsync(CancellationToken cancellationToken);

    ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken);
}
