using QuicManaged.Interop.HqInterop;
using QuicManaged.Interop.Http3;
using QuicManaged.Interop.Serving;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.Runner;

/// <summary>Fetches every URL concurrently over one connection and writes each body to DOWNLOADS/&lt;path&gt;.</summary>
internal static class InteropDownloader
{
    /// <summary>
    /// Requests in flight at once. The runner's multiplexing case asks for thousands of files; the transport's
    /// stream limit throttles streams, and this caps open output files well below the process descriptor limit.
    /// </summary>
    public const int MaxConcurrentRequests = 128;

    /// <summary>True only when every request succeeded (200 for h3, clean FIN for hq) and every file was written completely.</summary>
    public static async Task<bool> RunAsync(IMultiplexedConnection connection, string alpn, IReadOnlyList<Uri> urls, string downloadDirectory, TextWriter log, CancellationToken cancellationToken)
    {
        Http3Client? h3 = null;
        if (alpn == InteropTestCase.AlpnH3)
        {
            h3 = new Http3Client(connection);
            await h3.StartAsync(cancellationToken).ConfigureAwait(false);
        }

        try
        {
            using SemaphoreSlim slots = new(MaxConcurrentRequests);
            Task<bool>[] downloads = new Task<bool>[urls.Count];
            for (int i = 0; i < urls.Count; i++)
            {
                downloads[i] = DownloadOneAsync(connection, h3, urls[i], downloadDirectory, slots, log, cancellationToken);
            }

            bool[] results = await Task.WhenAll(downloads).ConfigureAwait(false);
            if (h3 is null)
            {
                // hq-interop has no closing handshake of its own: application error 0 closes the connection.
                await connection.CloseAsync(0, cancellationToken).ConfigureAwait(false);
            }

            return Array.TrueForAll(results, static ok => ok);
        }
        finally
        {
            if (h3 is not null)
            {
                await h3.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private static async Task<bool> DownloadOneAsync(IMultiplexedConnection connection, Http3Client? h3, Uri url, string downloadDirectory, SemaphoreSlim slots, TextWriter log, CancellationToken cancellationToken)
    {
        try
        {
            await slots.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            log.WriteLine($"{url}: cancelled before it started");
            return false;
        }

        try
        {
            return await DownloadOneAsync(connection, h3, url, downloadDirectory, log, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            slots.Release();
        }
    }

    private static async Task<bool> DownloadOneAsync(IMultiplexedConnection connection, Http3Client? h3, Uri url, string downloadDirectory, TextWriter log, CancellationToken cancellationToken)
    {
        string path = url.PathAndQuery;
        if (!FileRoot.TryMapToRelative(url.AbsolutePath, out string relative))
        {
            log.WriteLine($"refusing to save {url}: path does not map into DOWNLOADS");
            return false;
        }

        string target = Path.Combine(downloadDirectory, relative);
        Directory.CreateDirectory(Path.GetDirectoryName(target)!);
        try
        {
            FileStream file = new(target, FileMode.Create, FileAccess.Write, FileShare.None, 1, useAsync: true);
            await using (file.ConfigureAwait(false))
            {
                if (h3 is not null)
                {
                    Http3Response response = await h3.GetAsync(url.Authority, path, file, cancellationToken).ConfigureAwait(false);
                    if (response.StatusCode != 200)
                    {
                        log.WriteLine($"{url}: HTTP status {response.StatusCode}");
                        return false;
                    }
                }
                else
                {
                    await HqClient.GetAsync(connection, path, file, cancellationToken).ConfigureAwait(false);
                }

                await file.FlushAsync(cancellationToken).ConfigureAwait(false);
            }

            return true;
        }
        catch (Exception e)
        {
            // Whatever went wrong, this request failed: report it and let the exit code say so.
            log.WriteLine($"{url}: {e.GetType().Name}: {e.Message}");
            return false;
        }
    }
}
