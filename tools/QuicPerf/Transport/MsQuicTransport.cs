using System.Collections.Concurrent;
using System.Net;
using System.Net.Quic;
using System.Runtime.InteropServices;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Server and clients on System.Net.Quic (libmsquic), for comparison.</summary>
public sealed class MsQuicTransport : PerfTransport
{
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<QuicConnection, byte> _serverConnections = new();
    private PerfTransportOptions _options = null!;
    private QuicListener? _listener;
    private Task _acceptLoop = Task.CompletedTask;

    /// <summary>False with the reason when libmsquic cannot be loaded (System.Net.Quic then reports unsupported).</summary>
    public static bool IsAvailable(out string reason)
    {
        if (QuicListener.IsSupported && QuicConnection.IsSupported)
        {
            reason = "";
            return true;
        }
        string detail;
        if (OperatingSystem.IsLinux())
        {
            bool loads = NativeLibrary.TryLoad("libmsquic.so.2", out IntPtr handle) || NativeLibrary.TryLoad("libmsquic.so", out handle);
            if (loads) NativeLibrary.Free(handle);
            detail = loads
                ? "libmsquic loads, but System.Net.Quic rejected it (version too old, or OpenSSL without TLS 1.3)"
                : "neither libmsquic.so.2 nor libmsquic.so is found by the dynamic loader (install the 'libmsquic' package from packages.microsoft.com)";
        }
        else
        {
            detail = "msquic is not available on this OS/version";
        }
        reason = $"System.Net.Quic.QuicListener.IsSupported is false: {detail}.";
        return false;
    }

    public override PerfTransportKind Kind => PerfTransportKind.MsQuic;

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
        _listener = await QuicListener.ListenAsync(listenerOptions, cancellationToken).ConfigureAwait(false);
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
            Console.Error.WriteLine($"msquic server: accept failed: {e.GetType().Name}: {e.Message}");
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
        QuicConnection connection = await QuicConnection.ConnectAsync(options, cancellationToken).ConfigureAwait(false);
        return new MsQuicClientConnection(connection);
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
