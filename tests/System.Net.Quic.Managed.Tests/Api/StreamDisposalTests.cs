using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// QuicStream.DisposeAsync as in System.Net.Quic: completes unfinished writes gracefully, aborts unfinished reads with
/// DefaultStreamErrorCode, and returns once the write side is closed (FIN acknowledged), bounded by the connection's life.
/// </summary>
public class StreamDisposalTests
{
    private static CancellationToken Timeout() => new CancellationTokenSource(TimeSpan.FromSeconds(20)).Token;

    [Fact]
    public async Task DisposeFinishesWritesAndReturnsWhenTheFinIsAcknowledged()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            CancellationToken ct = Timeout();
            byte[] payload = new byte[200_000];
            new Random(7).NextBytes(payload);
            QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await stream.WriteAsync(payload, ct); // no CompleteWrites: disposal sends the FIN
            Task<QuicStream> accept = server.AcceptInboundStreamAsync(ct).AsTask();
            Task<byte[]> received = accept.ContinueWith(t => ReadToEndAsync(t.Result, ct), ct).Unwrap();

            await stream.DisposeAsync();
            // Returned only after everything, FIN included, was acknowledged: WritesClosed completed successfully.
            Assert.True(stream.WritesClosed.IsCompletedSuccessfully, $"WritesClosed: {stream.WritesClosed.Status}");
            Assert.Equal(payload, await received); // the peer read to a graceful end, not a reset
            QuicStream peer = await accept;
            await peer.ReadsClosed.WaitAsync(ct);
            await peer.DisposeAsync();
        }
    }

    [Fact]
    public async Task DisposeAbortsAnUnfinishedReadSideWithTheDefaultStreamErrorCode()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            CancellationToken ct = Timeout();
            QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await stream.WriteAsync(new byte[10], completeWrites: true, ct);
            QuicStream peer = await server.AcceptInboundStreamAsync(ct);
            Assert.Equal(10, (await ReadToEndAsync(peer, ct)).Length);
            await peer.WriteAsync(new byte[100], ct); // the client never reads it, and the peer never finishes

            await stream.DisposeAsync();
            Assert.True(stream.WritesClosed.IsCompletedSuccessfully);
            await Assert.ThrowsAnyAsync<Exception>(() => stream.ReadsClosed); // aborted locally

            // The peer learns through STOP_SENDING carrying the client's DefaultStreamErrorCode (0x0C).
            QuicException stop = await Assert.ThrowsAsync<QuicException>(() => peer.WritesClosed.WaitAsync(ct));
            Assert.Equal(QuicError.StreamAborted, stop.QuicError);
            Assert.Equal(0x0C, stop.ApplicationErrorCode);
            await peer.DisposeAsync();
        }
    }

    [Fact]
    public async Task DisposeWaitsForTheAcknowledgmentButNoLongerThanTheConnection()
    {
        // The server's stream window starts at 1 KiB and it never reads (its stream buffer admits 64 KiB more): the client's
        // FIN stays behind unsent data, so the disposal cannot finish until the connection goes away. 300 KiB is more than
        // the peer takes before it reads, and leaves less than the connection's initial send budget (256 KiB) unsent, so
        // the write itself completes.
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed, configure: o =>
            o.InitialReceiveWindowSizes = new QuicReceiveWindowSizes { RemotelyInitiatedBidirectionalStream = 1024 });
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (server)
        {
            CancellationToken ct = Timeout();
            QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await stream.WriteAsync(new byte[300 * 1024], ct);
            QuicStream peer = await server.AcceptInboundStreamAsync(ct);

            Task disposal = stream.DisposeAsync().AsTask();
            await Task.Delay(300);
            Assert.False(disposal.IsCompleted, "DisposeAsync returned before the FIN could be acknowledged");

            await client.DisposeAsync(); // the connection's life ends: the disposal stops waiting, without throwing
            await disposal.WaitAsync(ct);
            Assert.True(stream.WritesClosed.IsFaulted);
            await peer.DisposeAsync();
        }
    }

    [Fact]
    public async Task DisposeOfAPeerUnidirectionalStreamReturnsAtOnceAndStopsThePeer()
    {
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        var (client, server) = await ConnectPairAsync(QuicProvider.Managed, listener);
        await using (client)
        await using (server)
        {
            CancellationToken ct = Timeout();
            QuicStream outbound = await server.OpenOutboundStreamAsync(QuicStreamType.Unidirectional, ct);
            await outbound.WriteAsync(new byte[100], ct);
            QuicStream inbound = await client.AcceptInboundStreamAsync(ct);
            await inbound.DisposeAsync().AsTask().WaitAsync(ct); // nothing to write: only the read side is aborted
            QuicException stop = await Assert.ThrowsAsync<QuicException>(() => outbound.WritesClosed.WaitAsync(ct));
            Assert.Equal(0x0C, stop.ApplicationErrorCode);
            await outbound.DisposeAsync();
        }
    }
}
