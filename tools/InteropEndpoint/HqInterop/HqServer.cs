using QuicManaged.Interop.Serving;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.HqInterop;

/// <summary>hq-interop server for one connection: each bidirectional stream carries one request; the reply is the file then FIN.</summary>
internal sealed class HqServer
{
    /// <summary>Stream error code used when a request is refused (hq-interop defines no codes; this mirrors H3_REQUEST_REJECTED).</summary>
    public const long RequestRefused = 0x10b;

    private readonly IMultiplexedConnection _connection;
    private readonly FileRoot _root;

    public HqServer(IMultiplexedConnection connection, FileRoot root)
    {
        _connection = connection;
        _root = root;
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        List<Task> running = new();
        try
        {
            while (true)
            {
                IMultiplexedStream? stream = await _connection.AcceptStreamAsync(cancellationToken).ConfigureAwait(false);
                if (stream is null)
                {
                    break;
                }

                if (!stream.IsBidirectional)
                {
                    await stream.DisposeAsync().ConfigureAwait(false);
                    continue;
                }

                running.Add(HandleAsync(stream, cancellationToken));
                running.RemoveAll(static t => t.IsCompleted);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }

        await Task.WhenAll(running).ConfigureAwait(false);
    }

    internal async Task HandleAsync(IMultiplexedStream stream, CancellationToken cancellationToken)
    {
        await Task.Yield();
        await using (stream.ConfigureAwait(false))
        {
            try
            {
                byte[] request = new byte[HqRequestLine.MaxLength];
                int length = 0;
                while (length < request.Length && request.AsSpan(0, length).IndexOf((byte)'\n') < 0)
                {
                    int n = await stream.Stream.ReadAsync(request.AsMemory(length), cancellationToken).ConfigureAwait(false);
                    if (n == 0)
                    {
                        break;
                    }

                    length += n;
                }

                if (!HqRequestLine.TryParse(request.AsSpan(0, length), out string path) || !_root.TryResolve(path, out string file))
                {
                    stream.Abort(RequestRefused);
                    return;
                }

                FileStream source = new(file, FileMode.Open, FileAccess.Read, FileShare.Read, 1, useAsync: true);
                await using (source.ConfigureAwait(false))
                {
                    byte[] buffer = new byte[64 * 1024];
                    while (true)
                    {
                        int n = await source.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                        if (n == 0)
                        {
                            break;
                        }

                        await stream.Stream.WriteAsync(buffer.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
                    }
                }

                stream.CompleteWrites();
            }
            catch (IOException)
            {
                // Peer reset or connection gone.
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
            }
        }
    }
}
