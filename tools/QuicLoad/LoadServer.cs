using System.Collections.Concurrent;
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>
/// The in-process server: accepts every connection and serves each of its streams with <see cref="LoadProtocol.ServeAsync"/>.
/// In the serve mode (a server process of its own) it opens a unidirectional stream on each connection carrying its
/// 4-byte group index (big-endian) and echoes every bidirectional stream instead.
/// </summary>
public sealed class LoadServer : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<QuicConnection, Task> _connections = new();
    private readonly LoadCounters _counters;
    private readonly QuicListener _listener;
    private readonly Task _acceptLoop;
    private readonly bool _echo;
    private readonly int _groupIndex;
    private long _served;
    private long _servedStreams;
    private long _echoedBytes;

    private LoadServer(QuicListener listener, LoadCounters counters, LoadOptions options)
    {
        _listener = listener;
        _counters = counters;
        _echo = options.Mode == LoadMode.Serve;
        _groupIndex = options.ReusePortGroupIndex;
        _acceptLoop = AcceptLoopAsync();
    }

    /// <summary>Connections accepted so far.</summary>
    public long ServedConnections => Interlocked.Read(ref _served);

    /// <summary>serve: bidirectional streams echoed to their end.</summary>
    public long ServedStreams => Interlocked.Read(ref _servedStreams);

    /// <summary>serve: bytes echoed.</summary>
    public long EchoedBytes => Interlocked.Read(ref _echoedBytes);

    public IPEndPoint EndPoint => _listener.LocalEndPoint;

    /// <summary>Connections the server holds right now.</summary>
    public int OpenConnections => _connections.Count;

    public static async Task<LoadServer> StartAsync(LoadOptions options, X509Certificate2 certificate, LoadCounters counters, CancellationToken cancellationToken)
    {
        var listenerOptions = new QuicListenerOptions
        {
            ListenEndPoint = new IPEndPoint(options.IPv6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, options.Port),
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
                // idle: connections must outlive the setup of all the others and the two timed runs.
                IdleTimeout = options.Mode == LoadMode.Idle ? TimeSpan.FromMinutes(30) : TimeSpan.Zero,
                MaxInboundUnidirectionalStreams = 0,
                DefaultStreamErrorCode = 1,
                DefaultCloseErrorCode = 0,
            }),
            ListenerSockets = options.ListenerSockets,
            ReusePortGroupSize = options.ReusePortGroupSize,
            ReusePortGroupIndex = options.ReusePortGroupIndex,
            RequireRetry = options.RequireRetry,
            StatelessResetKey = options.StatelessResetKey,
            AddressValidationTokenKey = options.TokenKey,
        };
        QuicListener listener = await QuicListener.ListenAsync(listenerOptions, options.Provider, cancellationToken).ConfigureAwait(false);
        return new LoadServer(listener, counters, options);
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

            Interlocked.Increment(ref _served);
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
            if (_echo) streams.Add(SendGroupIndexAsync(connection));
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
        // The stream is disposed after a failure was handled, not by an `await using` around the serving: an await in a
        // finally block makes the compiler capture the exception and throw it again after the disposal, which costs
        // about 1 KiB of stack trace and exception holders per failing stream (10,000 fail at once in slow-reader).
        try
        {
            if (_echo) await EchoAsync(stream).ConfigureAwait(false);
            else await LoadProtocol.ServeAsync(stream, _stop.Token).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            StreamFailed(e);
        }

        try
        {
            await stream.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception e)
        {
            StreamFailed(e);
        }
    }

    private void StreamFailed(Exception e)
    {
        if (!_stop.IsCancellationRequested) _counters.ServerFailure("stream", e);
        // Otherwise shutting down.
    }

    /// <summary>serve: tells the client which server of the group holds its connection.</summary>
    private async Task SendGroupIndexAsync(QuicConnection connection)
    {
        try
        {
            QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, _stop.Token).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                byte[] index = new byte[4];
                System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(index, _groupIndex);
                await stream.WriteAsync(index, completeWrites: true, _stop.Token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (!_stop.IsCancellationRequested && e is not QuicException { QuicError: QuicError.ConnectionAborted or QuicError.ConnectionIdle or QuicError.OperationAborted })
        {
            _counters.ServerFailure("group index stream", e);
        }
        catch (Exception)
        {
            // The client went away first, or shutting down.
        }
    }

    /// <summary>serve: writes back everything the client sends, then ends the stream.</summary>
    private async Task EchoAsync(QuicStream stream)
    {
        byte[] buffer = new byte[64 * 1024];
        while (true)
        {
            int n = await stream.ReadAsync(buffer, _stop.Token).ConfigureAwait(false);
            if (n == 0) break;
            await stream.WriteAsync(buffer.AsMemory(0, n), _stop.Token).ConfigureAwait(false);
            Interlocked.Add(ref _echoedBytes, n);
        }

        stream.CompleteWrites();
        Interlocked.Increment(ref _servedStreams);
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
