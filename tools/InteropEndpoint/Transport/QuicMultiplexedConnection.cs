using System.Net.Quic.Managed;

namespace QuicManaged.Interop.Transport;

/// <summary>Adapts <see cref="QuicConnection"/> to <see cref="IMultiplexedConnection"/>.</summary>
internal sealed class QuicMultiplexedConnection : IMultiplexedConnection
{
    private readonly QuicConnection _connection;

    public QuicMultiplexedConnection(QuicConnection connection) => _connection = connection;

    public QuicConnection Connection => _connection;

    public async ValueTask<IMultiplexedStream> OpenStreamAsync(bool bidirectional, CancellationToken cancellationToken)
    {
        QuicStreamType type = bidirectional ? QuicStreamType.Bidirectional : QuicStreamType.Unidirectional;
        QuicStream stream = await _connection.OpenOutboundStreamAsync(type, cancellationToken).ConfigureAwait(false);
        return new QuicMultiplexedStream(stream, bidirectional);
    }

    public async ValueTask<IMultiplexedStream?> AcceptStreamAsync(CancellationToken cancellationToken)
    {
        try
        {
            QuicStream stream = await _connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
            return new QuicMultiplexedStream(stream, stream.Type == QuicStreamType.Bidirectional);
        }
        catch (QuicException e) when (e.QuicError is QuicError.ConnectionAborted or QuicError.OperationAborted or QuicError.ConnectionIdle)
        {
            return null;
        }
    }

    public ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken) => _connection.CloseAsync(errorCode, cancellationToken);

    public ValueTask DisposeAsync() => _connection.DisposeAsync();
}
