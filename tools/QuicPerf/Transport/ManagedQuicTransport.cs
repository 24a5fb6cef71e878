using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Server and clients on this repository's QUIC through its public API, on one provider chosen per instance
/// (QuicPerf resolves it once, from --provider or else the library's own selection, so the label always matches).</summary>
public sealed class ManagedQuicTransport : QuicApiTransport<QuicListener, QuicConnection>
{
    public ManagedQuicTransport(QuicProvider provider) => Provider = provider;

    /// <summary>The library provider both ends run on.</summary>
    public QuicProvider Provider { get; }

    public override PerfTransportKind Kind => PerfTransport.FromLibraryProvider(Provider);

    protected override async ValueTask<QuicListener> ListenAsync(IPEndPoint endPoint, CancellationToken cancellationToken)
    {
        var options = new QuicListenerOptions
        {
            ListenEndPoint = endPoint,
            ApplicationProtocols = new List<SslApplicationProtocol> { PerfTransportOptions.Alpn },
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
            {
                ServerAuthenticationOptions = Options.CreateServerTlsOptions(),
                MaxInboundBidirectionalStreams = Options.MaxInboundStreams,
                DefaultStreamErrorCode = 0,
                DefaultCloseErrorCode = 0,
                InitialReceiveWindowSizes = ReceiveWindows(),
                MaxPathDatagramSize = Options.MaxPathDatagramSize,
            }),
        };
        // Scale-out measurements (docs/SCALING.md): QUICPERF_LISTENER_SOCKETS=N gives the managed listener N SO_REUSEPORT sockets.
        if (Provider == QuicProvider.Managed
            && int.TryParse(Environment.GetEnvironmentVariable("QUICPERF_LISTENER_SOCKETS"), out int sockets) && sockets > 1)
        {
            options.ListenerSockets = sockets;
        }
        return await QuicListener.ListenAsync(options, Provider, cancellationToken).ConfigureAwait(false);
    }

    protected override IPEndPoint LocalEndPoint(QuicListener listener) => listener.LocalEndPoint;

    protected override ValueTask<QuicConnection> AcceptConnectionAsync(QuicListener listener, CancellationToken cancellationToken)
        => listener.AcceptConnectionAsync(cancellationToken);

    protected override async ValueTask<Stream> AcceptInboundStreamAsync(QuicConnection connection, CancellationToken cancellationToken)
        => await connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);

    protected override async ValueTask<QuicConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken)
    {
        var options = new QuicClientConnectionOptions
        {
            RemoteEndPoint = remote,
            ClientAuthenticationOptions = Options.CreateClientTlsOptions(),
            DefaultStreamErrorCode = 0,
            DefaultCloseErrorCode = 0,
            MaxInboundBidirectionalStreams = 0,
            InitialReceiveWindowSizes = ReceiveWindows(),
            MaxPathDatagramSize = Options.MaxPathDatagramSize,
        };
        return await QuicConnection.ConnectAsync(options, Provider, cancellationToken).ConfigureAwait(false);
    }

    protected override async ValueTask<Stream> OpenStreamAsync(QuicConnection connection, CancellationToken cancellationToken)
        => await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);

    protected override TlsCipherSuite NegotiatedCipherSuite(QuicConnection connection) => connection.NegotiatedCipherSuite;

    protected override ValueTask CloseAsync(QuicConnection connection) => connection.CloseAsync(0);

    /// <summary>The same window for every stream type, and the connection's.</summary>
    private QuicReceiveWindowSizes ReceiveWindows() => new()
    {
        Connection = Options.ConnectionReceiveWindow,
        LocallyInitiatedBidirectionalStream = Options.StreamReceiveWindow,
        RemotelyInitiatedBidirectionalStream = Options.StreamReceiveWindow,
        UnidirectionalStream = Options.StreamReceiveWindow,
    };
}
