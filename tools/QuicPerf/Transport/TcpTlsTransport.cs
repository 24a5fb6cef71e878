using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>The baseline: SslStream (TLS 1.3, OpenSSL) over TCP loopback, one stream per connection.</summary>
public sealed class TcpTlsTransport : PerfTransport
{
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<SslStream, byte> _serverStreams = new();
    private PerfTransportOptions _options = null!;
    private Socket? _listener;
    private Task _acceptLoop = Task.CompletedTask;

    public override PerfTransportKind Kind => PerfTransportKind.TcpTls;

    public override bool MultiplexesStreams => false;

    public override IPEndPoint ListenEndPoint => (IPEndPoint?)_listener?.LocalEndPoint ?? throw new InvalidOperationException("Not started.");

    public override void ConfigureClient(PerfTransportOptions options) => _options = options;

    public override Task StartAsync(PerfTransportOptions options, CancellationToken cancellationToken)
    {
        _options = options;
        _listener = new Socket(options.Address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        _listener.Bind(new IPEndPoint(options.Address, options.Port));
        _listener.Listen(512);
        _acceptLoop = AcceptLoopAsync(_listener, _stop.Token);
        return Task.CompletedTask;
    }

    private async Task AcceptLoopAsync(Socket listener, CancellationToken cancellationToken)
    {
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                Socket socket = await listener.AcceptAsync(cancellationToken).ConfigureAwait(false);
                _ = ServeAsync(socket, cancellationToken);
            }
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"tcp-tls server: accept failed: {e.GetType().Name}: {e.Message}");
        }
    }

    private async Task ServeAsync(Socket socket, CancellationToken cancellationToken)
    {
        socket.NoDelay = true;
        var ssl = new SslStream(new NetworkStream(socket, ownsSocket: true), leaveInnerStreamOpen: false);
        _serverStreams.TryAdd(ssl, 0);
        try
        {
            await ssl.AuthenticateAsServerAsync(_options.CreateServerTlsOptions(), cancellationToken).ConfigureAwait(false);
            await PerfRequestHandler.RunAsync(ssl, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Client went away during the handshake.
        }
        finally
        {
            _serverStreams.TryRemove(ssl, out _);
            await ssl.DisposeAsync().ConfigureAwait(false);
        }
    }

    public override async Task<PerfClientConnection> ConnectAsync(CancellationToken cancellationToken)
    {
        var socket = new Socket(Target(_options, () => ListenEndPoint).AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(Target(_options, () => ListenEndPoint), cancellationToken).ConfigureAwait(false);
            var ssl = new SslStream(new NetworkStream(socket, ownsSocket: true), leaveInnerStreamOpen: false);
            await ssl.AuthenticateAsClientAsync(_options.CreateClientTlsOptions(), cancellationToken).ConfigureAwait(false);
            return new TcpTlsClientConnection(ssl);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    public override async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        _listener?.Dispose();
        await _acceptLoop.ConfigureAwait(false);
        foreach (SslStream ssl in _serverStreams.Keys)
        {
            if (_serverStreams.TryRemove(ssl, out _)) await ssl.DisposeAsync().ConfigureAwait(false);
        }
        _stop.Dispose();
    }
}
