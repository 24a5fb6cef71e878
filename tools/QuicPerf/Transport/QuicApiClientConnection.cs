using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>A client connection of a <see cref="QuicApiTransport{TListener, TConnection}"/>: either QUIC API's connection.</summary>
public sealed class QuicApiClientConnection<TConnection> : PerfClientConnection
    where TConnection : class, IAsyncDisposable
{
    private readonly Func<TConnection, CancellationToken, ValueTask<Stream>> _openStream;
    private readonly Func<TConnection, ValueTask> _close;

    public QuicApiClientConnection(
        TConnection connection,
        TlsCipherSuite negotiatedCipherSuite,
        Func<TConnection, CancellationToken, ValueTask<Stream>> openStream,
        Func<TConnection, ValueTask> close)
    {
        Connection = connection;
        NegotiatedCipherSuite = negotiatedCipherSuite;
        _openStream = openStream;
        _close = close;
    }

    public TConnection Connection { get; }

    public override TlsCipherSuite NegotiatedCipherSuite { get; }

    public override ValueTask<Stream> OpenStreamAsync(CancellationToken cancellationToken) => _openStream(Connection, cancellationToken);

    public override async ValueTask DisposeAsync()
    {
        try
        {
            await _close(Connection).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Already closed (e.g. idle timeout): disposal below still releases it.
        }
        await Connection.DisposeAsync().ConfigureAwait(false);
    }
}
