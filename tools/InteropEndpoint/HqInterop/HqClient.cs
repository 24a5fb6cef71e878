using System.Text;
using QuicManaged.Interop.Transport;

namespace QuicManaged.Interop.HqInterop;

/// <summary>hq-interop client (HTTP/0.9 over QUIC, ALPN "hq-interop"): "GET /path\r\n", FIN, then the body until FIN.</summary>
internal static class HqClient
{
    public static async Task<long> GetAsync(IMultiplexedConnection connection, string path, Stream body, CancellationToken cancellationToken)
    {
        IMultiplexedStream stream = await connection.OpenStreamAsync(true, cancellationToken).ConfigureAwait(false);
        await using (stream.ConfigureAwait(false))
        {
            await stream.Stream.WriteAsync(Encoding.ASCII.GetBytes("GET " + path + "\r\n"), cancellationToken).ConfigureAwait(false);
            stream.CompleteWrites();
            byte[] buffer = new byte[64 * 1024];
            long total = 0;
            while (true)
            {
                // A reset stream surfaces as an exception from ReadAsync, so only a FIN ends this loop normally.
                int n = await stream.Stream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                if (n == 0)
                {
                    return total;
                }

                total += n;
                await body.WriteAsync(buffer.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
            }
        }
    }
}
