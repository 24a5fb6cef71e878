using System.Threading.Channels;

namespace QuicManaged.Interop.Transport;

/// <summary>Two connected in-memory endpoints, standing in for a QUIC connection in tests.</summary>
internal sealed class InMemoryConnection : IMultiplexedConnection
{
    private readonly Channel<IMultiplexedStream> _incoming = Channel.CreateUnbounded<IMultiplexedStream>();
    private InMemoryConnection _peer = null!;
    // Shared by both ends: closing the connection resets every stream, as a QUIC CONNECTION_CLOSE does.
    private static long s_nextId;
    private List<InMemoryStream> _streams = null!;

    /// <summary>The error code the peer closed the connection with, if it did.</summary>
    public long? PeerCloseErrorCode { get; private set; }

    public static (InMemoryConnection Client, InMemoryConnection Server) CreatePair()
    {
        InMemoryConnection client = new();
        InMemoryConnection server = new();
        client._peer = server;
        server._peer = client;
        client._streams = server._streams = new List<InMemoryStream>();
        return (client, server);
    }

    public ValueTask<IMultiplexedStream> OpenStreamAsync(bool bidirectional, CancellationToken cancellationToken)
    {
        InMemoryPipe toPeer = new();
        InMemoryPipe fromPeer = new();
        long id = Interlocked.Increment(ref s_nextId) * 4;
        InMemoryStream local = new(bidirectional ? fromPeer : null, toPeer, bidirectional) { Id = id };
        InMemoryStream remote = new(toPeer, bidirectional ? fromPeer : null, bidirectional) { Id = id };
        lock (_streams)
        {
            _streams.Add(local);
            _streams.Add(remote);
        }

        if (!_peer._incoming.Writer.TryWrite(remote))
        {
            throw new IOException("The in-memory connection is closed.");
        }

        return ValueTask.FromResult<IMultiplexedStream>(local);
    }

    public async ValueTask<IMultiplexedStream?> AcceptStreamAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await _incoming.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    public ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken)
    {
        _peer.PeerCloseErrorCode ??= errorCode;
        _incoming.Writer.TryComplete();
        _peer._incoming.Writer.TryComplete();
        lock (_streams)
        {
            foreach (InMemoryStream stream in _streams)
            {
                stream.Abort(errorCode);
            }

            _streams.Clear();
        }

        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync() => CloseAsync(0, CancellationToken.None);
}
