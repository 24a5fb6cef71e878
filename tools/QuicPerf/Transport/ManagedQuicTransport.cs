using System.Collections.Concurrent;
using System.Net;
using System.Net.Quic.Managed;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Server and clients on this repository's QUIC through its public API, on one provider chosen per instance
/// (QuicPerf resolves it once, from --provider or else the library's own selection, so the label always matches).</summary>
public sealed class ManagedQuicTransport : PerfTransport
{
    public ManagedQuicTransport(QuicProvider provider) => Provider = provider;

    /// <summary>The library provider both ends run on.</summary>
    public QuicProvider Provider { get; }

    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<QuicConnection, byte> _serverConnections = new();
    private PerfTransportOptions _options = null!;
    private QuicListener? _listener;
    private Task _acceptLoop = Task.CompletedTask;

    public override PerfTransportKind Kind => PerfTransport.FromLibraryProvider(Provider);

    public override bool MultiplexesStreams => true;

    public override IPEndPoint ListenEndPoint => _listener?.LocalEndPoint ?? throw new InvalidOperationException("Not started.");

    public override void ConfigureClient(PerfTransportOptions options) => _options = options;

    public override async Task StartAsync(PerfTransportOptions options, CancellationToken cancellationToken)
    {
        _options = options;
        var listenerOptions = new QuicListenerOptions
        {
            ListenEndPoint = new IPEndPoint(options.Address, options.Port),
            ApplicationProtocols = new List<System.Net.Security.SslApplicationProtocol> { PerfTransportOptions.Alpn },
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(CreateServerOptions()),
        };
        _listener = await QuicListener.ListenAsync(listenerOptions, Provider, cancellationToken).ConfigureAwait(false);
        _acceptLoop = AcceptLoopAsync(_listener, _stop.Token);
    }

    private QuicServerConnectionOptions CreateServerOptions() => new()
    {
        ServerAuthenticationOptions = _options.CreateServerTlsOptions(),
        MaxInboundBidirectionalStreams = _options.MaxInboundStreams,
        DefaultStreamErrorCode = 0,
        DefaultCloseErrorCode = 0,
        InitialReceiveWindowSizes = new QuicReceiveWindowSizes
        {
            Connection = _options.ConnectionReceiveWindow,
            LocallyInitiatedBidirectionalStream = _options.StreamReceiveWindow,
            RemotelyInitiatedBidirectionalStream = _options.StreamReceiveWindow,
            UnidirectionalStream = _options.StreamReceiveWindow,
        },
    };

    private async Task AcceptLoopAsync(QuicListener listener, CancellationToken cancellationToken)
    {
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                QuicConnection connection = await listener.AcceptConnectionAsync(cancellationToken).ConfigureAwait(false);
                _serverConnections.TryAdd(connection, 0);
                _ = ServeConnectionAsync(connection, cancellationToken);
            }
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"{PerfTransport.DisplayName(Kind)} server: accept failed: {e.GetType().Name}: {e.Message}");
        }
    }

    private async Task ServeConnectionAsync(QuicConnection connection, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                QuicStream stream = await connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
                _ = PerfRequestHandler.RunAsync(stream, cancellationToken);
            }
        }
        catch (Exception)
        {
            // Connection closed by the client or by shutdown.
        }
        finally
        {
            if (_serverConnections.TryRemove(connection, out _))
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    public override async Task<PerfClientConnection> ConnectAsync(CancellationToken cancellationToken)
    {
        var options = new QuicClientConnectionOptions
        {
            RemoteEndPoint = Target(_options, () => ListenEndPoint),
            ClientAuthenticationOptions = _options.CreateClientTlsOptions(),
            DefaultStreamErrorCode = 0,
            DefaultCloseErrorCode = 0,
            MaxInboundBidirectionalStreams = 0,
            InitialReceiveWindowSizes = new QuicReceiveWindowSizes
            {
                Connection = _options.ConnectionReceiveWindow,
                LocallyInitiatedBidirectionalStream = _options.StreamReceiveWindow,
                RemotelyInitiatedBidirectionalStream = _options.StreamReceiveWindow,
                UnidirectionalStream = _options.StreamReceiveWindow,
            },
        };
        QuicConnection connection = await QuicConnection.ConnectAsync(options, Provider, cancellationToken).ConfigureAwait(false);
        return new ManagedQuicClientConnection(connection);
    }

    public override async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        if (_listener is not null) await _listener.DisposeAsync().ConfigureAwait(false);
        await _acceptLoop.ConfigureAwait(false);
        foreach (QuicConnection connection in _serverConnections.Keys)
        {
            if (_serverConnections.TryRemove(connection, out _))
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
        _stop.Dispose();
    }
}
