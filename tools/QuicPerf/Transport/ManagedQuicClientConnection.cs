using System.Net.Quic.Managed;
using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

public sealed class ManagedQuicClientConnection : PerfClientConnection
{
    private readonly QuicConnection _connection;

    public ManagedQuicClientConnection(QuicConnection connection) => _connection = connection;

    public QuicConnection Connection => _connection;

    public override TlsCipherSuite NegotiatedCipherSuite => _connection.NegotiatedCipherSuite;

    public override async ValueTask<Stream> OpenStreamAsync(CancellationToken cancellationToken)
        => await _connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);

    public override async ValueTask DisposeAsync()
    {
        try
        {
            await _connection.CloseAsync(0).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Already closed (e.g. idle timeout): disposal below still releases it.
        }
        await _connection.DisposeAsync().ConfigureAwait(false);
    }
}
