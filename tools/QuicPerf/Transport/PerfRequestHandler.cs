using System.Buffers;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>The server side of the perf protocol (<see cref="PerfRequestHeader"/>) on one stream.</summary>
public static class PerfRequestHandler
{
    public const int ChunkSize = 64 * 1024;

    private static readonly byte[] s_payload = CreatePayload();

    /// <summary>The bytes every sender repeats (same content for all providers).</summary>
    public static ReadOnlyMemory<byte> Payload => s_payload;

    public static async Task RunAsync(Stream stream, CancellationToken cancellationToken)
    {
        byte[] header = new byte[PerfRequestHeader.Size];
        try
        {
            while (true)
            {
                int got = 0;
                while (got < header.Length)
                {
                    int n = await stream.ReadAsync(header.AsMemory(got), cancellationToken).ConfigureAwait(false);
                    if (n == 0) return; // the client finished the stream between requests
                    got += n;
                }
                PerfRequestHeader request = PerfRequestHeader.Read(header);
                // Rented per request and sized to it (at most one chunk): QUIC runs this handler once per stream, i.e.
                // per request, TCP once per connection. A new 64 KiB array per handler was 90% of the bytes the
                // RequestResponse benchmark reported per QUIC request, and renting 64 KiB for 100 concurrent
                // requests still overflowed ArrayPool.Shared's few arrays of that size.
                byte[] buffer = ArrayPool<byte>.Shared.Rent((int)Math.Clamp(request.RequestBytes, 1, ChunkSize));
                try
                {
                    if (!await PerfStreamOperations.DiscardExactlyAsync(stream, request.RequestBytes, buffer, cancellationToken).ConfigureAwait(false)) return;
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                }
                if (request.ResponseBytes == PerfRequestHeader.Unlimited)
                {
                    // Until the client stops reading (STOP_SENDING / connection closed): the write then throws.
                    while (true)
                    {
                        await PerfStreamOperations.WriteAsync(stream, s_payload, false, cancellationToken).ConfigureAwait(false);
                    }
                }
                await PerfStreamOperations.WriteRepeatedAsync(stream, request.ResponseBytes, s_payload, request.Last, cancellationToken).ConfigureAwait(false);
                if (request.Last) return;
            }
        }
        catch (Exception)
        {
            // The client aborted or closed: the normal end of a timed transfer, not an error of the server.
        }
        finally
        {
            await stream.DisposeAsync().ConfigureAwait(false);
        }
    }

    private static byte[] CreatePayload()
    {
        byte[] payload = new byte[ChunkSize];
        new Random(9000).NextBytes(payload); // incompressible, deterministic
        return payload;
    }
}
