using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// A small managed WriteAsync is staged on the caller's thread and completes at once (no wait for the driver thread);
/// what that could break: order between staged and large writes, the FIN after staged bytes, and bytes still staged
/// when the stream is disposed while the core's send buffer is full.
/// </summary>
public class StreamWriteStagingTests
{
    private static byte Pattern(long offset) => (byte)(offset * 7 + (offset >> 11));

    private static byte[] Slice(long offset, int length)
    {
        byte[] data = new byte[length];
        for (int i = 0; i < length; i++) data[i] = Pattern(offset + i);
        return data;
    }

    /// <summary>Reads to the FIN checking the pattern from stream offset <paramref name="start"/>; returns the count.</summary>
    private static async Task<long> ReadAndCheckToEndAsync(QuicStream stream, CancellationToken ct, long start = 0)
    {
        byte[] buffer = new byte[32 * 1024];
        long total = 0;
        int n;
        while ((n = await stream.ReadAsync(buffer, ct)) > 0)
        {
            for (int i = 0; i < n; i++)
            {
                if (buffer[i] != Pattern(start + total + i)) throw new Xunit.Sdk.XunitException($"byte {start + total + i} differs");
            }
            total += n;
        }
        return total;
    }

    [Fact]
    public async Task SmallWritesCompleteSynchronouslyAndArriveInOrder()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            long offset = 0;
            int synchronous = 0;
            for (int i = 0; i < 100; i++)
            {
                ValueTask write = outbound.WriteAsync(Slice(offset, 100), completeWrites: i == 99, ct);
                if (write.IsCompletedSuccessfully) synchronous++;
                await write;
                offset += 100;
            }
            // 10,000 bytes fit in the stage whatever the driver does meanwhile: none waits for the driver thread.
            Assert.Equal(100, synchronous);
            await outbound.WritesClosed.WaitAsync(ct); // everything arrived (and was acknowledged)
            await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
            // What came with the stream's opening is in its buffer before AcceptInboundStreamAsync hands it out.
            Assert.True(inbound.ReadAsync(new byte[1], ct).IsCompletedSuccessfully);
            Assert.Equal(offset - 1, await ReadAndCheckToEndAsync(inbound, ct, start: 1));
        });
    }

    [Fact]
    public async Task StagedAndLargeWritesInterleavedKeepTheirOrder()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            await using QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await outbound.WriteAsync(Slice(0, 1), ct);
            await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
            Task<long> reader = ReadAndCheckToEndAsync(inbound, ct);
            var random = new Random(1234);
            long offset = 1;
            for (int i = 0; i < 300; i++)
            {
                // Sizes on both sides of the stage's capacity, and runs of small ones that fill it.
                int size = (i % 7) switch
                {
                    0 => random.Next(16 * 1024 + 1, 100 * 1024),
                    1 => 16 * 1024,
                    _ => random.Next(1, 6000),
                };
                await outbound.WriteAsync(Slice(offset, size), ct);
                offset += size;
            }
            outbound.CompleteWrites(); // the FIN must follow whatever is still staged
            Assert.Equal(offset, await reader);
            await outbound.WritesClosed.WaitAsync(ct);
        });
    }

    [Fact]
    public async Task BytesStagedBehindAFullSendBufferAreDeliveredWhenTheStreamIsDisposed()
    {
        await WithConnectedPairAsync("managed", async (client, server, ct) =>
        {
            QuicStream outbound = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await outbound.WriteAsync(Slice(0, 1), ct);
            await using QuicStream inbound = await server.AcceptInboundStreamAsync(ct);
            Assert.Equal(1, await inbound.ReadAsync(new byte[1], ct));
            // The peer reads nothing more: its 64 KiB window stops the sender, whose send budget (256 KiB held beyond
            // what the window let out, counted in 4 KiB chunks) fills with large writes; the small writes after them
            // wait in the stage, and the disposal's FIN waits behind them.
            long offset = 1;
            foreach (int size in new[] { 64 * 1024, 64 * 1024, 64 * 1024, 64 * 1024, 60 * 1024 })
            {
                await outbound.WriteAsync(Slice(offset, size), ct);
                offset += size;
            }
            for (int i = 0; i < 10; i++)
            {
                await outbound.WriteAsync(Slice(offset, 1000), ct);
                offset += 1000;
            }
            ValueTask disposal = outbound.DisposeAsync();
            long total = await ReadAndCheckToEndAsync(inbound, ct, start: 1);
            Assert.Equal(offset - 1, total);
            await disposal.AsTask().WaitAsync(ct);
        });
    }
}
