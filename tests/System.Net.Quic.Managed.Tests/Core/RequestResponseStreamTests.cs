using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Request/response streams one at a time on one connection (what QuicLoad's busy connection does): what each stream
/// costs on the wire and in the core.
/// </summary>
public class RequestResponseStreamTests(ITestOutputHelper output)
{
    private const int RequestBytes = 64;

    /// <summary>
    /// Runs <paramref name="count"/> streams one after another: the client opens one and writes its request with FIN,
    /// the server reads it and answers <paramref name="responseBytes"/> with FIN, the client reads the answer to its
    /// end and opens the next. Returns the server's datagrams over the measured streams (after <paramref name="warmUp"/>).
    /// </summary>
    private static long RunSequentialStreams(QuicPair pair, int warmUp, int count, int responseBytes, Action? onMeasureStart = null, Action? onMeasureEnd = null)
    {
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        byte[] request = new byte[RequestBytes];
        byte[] response = new byte[responseBytes];
        byte[] buffer = new byte[16 * 1024];
        int done = 0;
        long current = -1;
        long answered = -1;
        long serverDatagramsAtStart = 0;
        var requestBytes = new Dictionary<long, int>();

        bool Step()
        {
            if (current < 0 && done < warmUp + count)
            {
                if (done == warmUp)
                {
                    serverDatagramsAtStart = server.Statistics.DatagramsSent;
                    onMeasureStart?.Invoke();
                }
                // Not Assert.Equal in the loop: xUnit's generic comparison allocates (the allocation test counts this thread).
                if (!client.TryOpenStream(unidirectional: false, out current)) throw new InvalidOperationException("the client ran out of stream credit");
                if (client.WriteStream(current, request, fin: true) != RequestBytes) throw new InvalidOperationException("request not taken");
            }
            while (server.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind is not (ConnectionEventKind.StreamOpened or ConnectionEventKind.StreamReadable)) continue;
                if (e.StreamId == answered) continue;
                if (!requestBytes.TryGetValue(e.StreamId, out int got)) got = 0;
                while (true)
                {
                    int n = server.ReadStream(e.StreamId, buffer, out bool fin, out _, out _);
                    got += n;
                    if (fin)
                    {
                        if (got != RequestBytes) throw new InvalidOperationException($"request of {got} bytes");
                        if (server.WriteStream(e.StreamId, response, fin: true) != responseBytes) throw new InvalidOperationException("response not taken");
                        answered = e.StreamId;
                        break;
                    }
                    if (n == 0) break;
                }
                if (answered == e.StreamId) requestBytes.Remove(e.StreamId);
                else requestBytes[e.StreamId] = got;
            }
            while (client.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind != ConnectionEventKind.StreamReadable || e.StreamId != current) continue;
                while (true)
                {
                    int n = client.ReadStream(current, buffer, out bool fin, out _, out _);
                    if (fin)
                    {
                        current = -1;
                        done++;
                        if (done == warmUp + count) onMeasureEnd?.Invoke();
                        break;
                    }
                    if (n == 0) break;
                }
            }
            return done == warmUp + count;
        }

        Assert.True(pair.RunUntil(Step, 60_000_000) == SimRunResult.ConditionMet);
        return server.Statistics.DatagramsSent - serverDatagramsAtStart;
    }

    /// <summary>
    /// The server gives a finished stream's credit back (MAX_STREAMS) with its next response rather than in a packet of
    /// its own: with one-packet responses it sends about one datagram per stream. The peer still has most of its limit
    /// (100) left throughout, so it never waits for the credit.
    /// </summary>
    [Fact]
    public void StreamCreditRidesWithTheNextResponse()
    {
        var link = new LinkConditions { DelayUs = 5_000, BandwidthBitsPerSecond = 100_000_000, QueueLimitBytes = 1 << 20 };
        using var pair = new QuicPair(seed: 26, link);
        Assert.True(pair.Handshake());
        const int Streams = 200;
        long datagrams = RunSequentialStreams(pair, warmUp: 10, count: Streams, responseBytes: 500);
        output.WriteLine($"server datagrams per stream: {datagrams / (double)Streams:0.00}");
        Assert.True(datagrams <= Streams * 1.2, $"the server sent {datagrams} datagrams for {Streams} one-packet responses");
        Assert.True(pair.ClientConnection!.Streams.LocalBidiLimit.MaxStreams >= 100 + 210 - 1);
    }

    /// <summary>
    /// Credit held back for a later packet still goes when nothing else does: after the last stream the client learns
    /// the full limit within the server's max_ack_delay (plus the path's delay).
    /// </summary>
    [Fact]
    public void HeldStreamCreditGoesOnItsOwnWhenNothingElseIsSent()
    {
        var link = new LinkConditions { DelayUs = 5_000, BandwidthBitsPerSecond = 100_000_000, QueueLimitBytes = 1 << 20 };
        using var pair = new QuicPair(seed: 27, link);
        Assert.True(pair.Handshake());
        RunSequentialStreams(pair, warmUp: 0, count: 3, responseBytes: 500);
        Connection client = pair.ClientConnection!;
        long start = pair.Network.NowUs;
        Assert.True(pair.RunUntil(() => client.Streams.LocalBidiLimit.MaxStreams == 103, 1_000_000) == SimRunResult.ConditionMet);
        long waitedUs = pair.Network.NowUs - start;
        output.WriteLine($"full limit after {waitedUs} us");
        // The client acknowledges the last response after its max_ack_delay, the server holds the credit for its own.
        Assert.True(waitedUs <= pair.ClientOptions.MaxAckDelayUs + pair.ServerOptions.MaxAckDelayUs + (4 * 5_000), $"waited {waitedUs} us");
    }
}
