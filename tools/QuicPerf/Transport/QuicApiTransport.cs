using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>
/// Server and clients on an API shaped like System.Net.Quic (listener, connection, stream), written once for the two
/// implementations QuicPerf measures: this library's public API on a <c>QuicProvider</c>
/// (<see cref="ManagedQuicTransport"/>) and the inbox System.Net.Quic called directly (<see cref="MsQuicTransport"/>,
/// <c>--provider msquic-direct</c>). Subclasses supply only the calls whose types differ; the streams are the ones each
/// API returns, used as they are, so nothing sits between a transfer and the QUIC stack it measures.
/// </summary>
public abstract class QuicApiTransport<TListener, TConnection> : PerfTransport
    where TListener : class, IAsyncDisposable
    where TConnection : class, IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<TConnection, byte> _serverConnections = new();
    private TListener? _listener;
    private Task _acceptLoop = Task.CompletedTask;

    public override bool MultiplexesStreams => true;

    public override IPEndPoint ListenEndPoint => _listener is { } listener ? LocalEndPoint(listener) : throw new InvalidOperationException("Not started.");

    /// <summary>What both ends agreed on (set by <see cref="StartAsync"/> or <see cref="ConfigureClient"/>).</summary>
    protected PerfTransportOptions Options { get; private set; } = null!;

    public override void ConfigureClient(PerfTransportOptions options) => Options = options;

    public override async Task StartAsync(PerfTransportOptions options, CancellationToken cancellationToken)
    {
        Options = options;
        _listener = await ListenAsync(new IPEndPoint(options.Address, options.Port), cancellationToken).ConfigureAwait(false);
        _acceptLoop = AcceptLoopAsync(_listener, _stop.Token);
    }

    public override async Task<PerfClientConnection> ConnectAsync(CancellationToken cancellationToken)
    {
        TConnection connection = await ConnectAsync(Target(Options, () => ListenEndPoint), cancellationToken).ConfigureAwait(false);
        return new QuicApiClientConnection<TConnection>(connection, NegotiatedCipherSuite(connection), OpenStreamAsync, CloseAsync);
    }

    /// <summary>A listener on <paramref name="endPoint"/> offering <see cref="PerfTransportOptions.Alpn"/>, with the server side of <see cref="Options"/>.</summary>
    protected abstract ValueTask<TListener> ListenAsync(IPEndPoint endPoint, CancellationToken cancellationToken);

    protected abstract IPEndPoint LocalEndPoint(TListener listener);

    protected abstract ValueTask<TConnection> AcceptConnectionAsync(TListener listener, CancellationToken cancellationToken);

    protected abstract ValueTask<Stream> AcceptInboundStreamAsync(TConnection connection, CancellationToken cancellationToken);

    /// <summary>A client connection to <paramref name="remote"/> with the client side of <see cref="Options"/>.</summary>
    protected abstract ValueTask<TConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken);

    /// <summary>A new outbound bidirectional stream.</summary>
    protected abstract ValueTask<Stream> OpenStreamAsync(TConnection connection, CancellationToken cancellationToken);

    protected abstract TlsCipherSuite NegotiatedCipherSuite(TConnection connection);

    /// <summary>Closes <paramref name="connection"/> with application error code 0.</summary>
    protected abstract ValueTask CloseAsync(TConnection connection);

    private async Task AcceptLoopAsync(TListener listener, CancellationToken cancellationToken)
    {
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                TConnection connection = await AcceptConnectionAsync(listener, cancellationToken).ConfigureAwait(false);
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

    private async Task ServeConnectionAsync(TConnection connection, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                Stream stream = await AcceptInboundStreamAsync(connection, cancellationToken).ConfigureAwait(false);
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

    public override async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        if (_listener is not null) await _listener.DisposeAsync().ConfigureAwait(false);
        await _acceptLoop.ConfigureAwait(false);
        foreach (TConnection connection in _serverConnections.Keys)
        {
            if (_serverConnections.TryRemove(connection, out _))
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
        _stop.Dispose();
    }
}
