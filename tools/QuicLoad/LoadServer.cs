using System.Collections.Concurrent;
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>The in-process server: accepts every connection and serves each of its streams with <see cref="LoadProtocol.ServeAsync"/>.</summary>
public sealed class LoadServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<QuicConnection, Task> _connections = new();
    private readonly LoadCounters _counters;
    private readonly QuicListener _listener;
    private readonly Task _acceptLoop;

    private LoadServer(QuicListener listener, LoadCounters counters)
    {
        _listener = listener;
        _counters = counters;
        _acceptLoop = AcceptLoopAsync();
    }

    public IPEndPoint EndPoint => _listener.LocalEndPoint;

    /// <summary>Connections the server holds right now.</summary>
    public int OpenConnections => _connections.Count;

    public static async Task<LoadServer> StartAsync(LoadOptions options, X509Certificate2 certificate, LoadCounters counters, CancellationToken cancellationToken)
    {
        var listenerOptions = new QuicListenerOptions
        {
            ListenEndPoint = new IPEndPoint(options.IPv6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, 0),
            ApplicationProtocols = [LoadProtocol.Alpn],
            ListenBacklog = 512,
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
            {
                ServerAuthenticationOptions = new SslServerAuthenticationOptions
                {
                    ApplicationProtocols = [LoadProtocol.Alpn],
                    ServerCertificate = certificate,
                },
                MaxInboundBidirectionalStreams = Math.Max(100, options.Parallel),
                MaxInboundUnidirectionalStreams = 0,
                DefaultStreamErrorCode = 1,
                DefaultCloseErrorCode = 0,
            }),
        };
        QuicListener listener = await QuicListener.ListenAsync(listenerOptions, options.Provider, cancellationToken).ConfigureAwait(false);
        return new LoadServer(listener, counters);
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            QuicConnection connection;
            try
            {
                connection = await _listener.AcceptConnectionAsync(_stop.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (_stop.IsCancellationRequested)
            {
                return;
            }
            catch (ObjectDisposedException) when (_stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                // A handshake that failed on the server side; the listener goes on.
                _counters.ServerFailure("accept", e);
                continue;
            }

            var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _connections[connection] = started.Task;
            _ = ServeConnectionAsync(connection, started);
        }
    }

    private async Task ServeConnectionAsync(QuicConnection connection, TaskCompletionSource done)
    {
        var streams = new List<Task>();
        try
        {
            while (true)
            {
                QuicStream stream = await connection.AcceptInboundStreamAsync(_stop.Token).ConfigureAwait(false);
                streams.Add(ServeStreamAsync(stream));
                if (streams.Count > 256) streams.RemoveAll(t => t.IsCompleted);
            }
        }
        catch (QuicException e) when (e.QuicError is QuicError.ConnectionAborted or QuicError.ConnectionIdle or QuicError.OperationAborted)
        {
            // The client closed the connection (or it idled out after the client went away): the normal end.
        }
        catch (OperationCanceledException) when (_stop.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            _counters.ServerFailure("accept stream", e);
        }
        finally
        {
            await Task.WhenAll(streams).ConfigureAwait(false);
            await connection.DisposeAsync().ConfigureAwait(false);
            _connections.TryRemove(connection, out _);
            done.TrySetResult();
        }
    }

    private async Task ServeStreamAsync(QuicStream stream)
    {
        try
        {
            await using (stream.ConfigureAwait(false))
            {
                await LoadProtocol.ServeAsync(stream, _stop.Token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (!_stop.IsCancellationRequested)
        {
            _counters.ServerFailure("stream", e);
        }
        catch (Exception)
        {
            // Shutting down.
        }
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        await _listener.DisposeAsync().ConfigureAwait(false);
        await _acceptLoop.ConfigureAwait(false);
        await Task.WhenAll(_connections.Values).ConfigureAwait(false);
        _stop.Dispose();
    }
}
