using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Streams;

/// <summary>
/// Stream priorities: the send scheduler (StreamTable: urgent lane for control frames and retransmissions,
/// then RFC 9218 urgency levels) on the deterministic simulator, with and without loss.
/// </summary>
public class StreamPrioritySimulationTests(ITestOutputHelper output)
{
    private const long OneWayDelayUs = 10_000; // RTT 20 ms plus serialisation and queueing
    private const long RttUs = 2 * OneWayDelayUs;

    /// <summary>
    /// A 20 Mbit/s link with a 100 KB bottleneck queue. <paramref name="largeWindows"/>: the server's receive windows
    /// never pause a stream, so any pause of a stream's new data is the scheduler's doing.
    /// </summary>
    private static QuicPair NewPair(int seed, double loss, bool largeWindows = false)
    {
        var link = new LinkConditions { DelayUs = OneWayDelayUs, BandwidthBitsPerSecond = 20_000_000, QueueLimitBytes = 100_000, LossProbability = loss };
        // The scheduler orders the data the sender holds: the sender's send budget is raised so that every stream's data
        // is held at once, as the tests write it all up front.
        void configure(QuicPair p)
        {
            p.ClientOptions.Streams.MinimumSendBudget = 8 << 20;
            if (!largeWindows) return;
            p.ServerOptions = new ConnectionOptions
            {
                Random = new System.Net.Quic.Managed.Crypto.SeededRandomSource(seed * 2 + 2),
                Name = "server",
                MaxDatagramSize = 1452,
                Streams = new StreamTableOptions
                {
                    InitialMaxData = 16 << 20,
                    InitialMaxStreamDataBidiLocal = 256 * 1024,
                    InitialMaxStreamDataBidiRemote = 8 << 20,
                    InitialMaxStreamDataUni = 256 * 1024,
                    MaxStreamsBidi = 100,
                    MaxStreamsUni = 100,
                },
            };
        }

        var pair = new QuicPair(seed, link, new LinkConditions { DelayUs = OneWayDelayUs, LossProbability = loss }, configure);
        Assert.True(pair.Handshake());
        return pair;
    }

    private sealed record MessageRun(long[] LatenciesUs, long[] BulkBytesDuringMessage, long BulkReceivedInPhase, long PhaseUs, bool AllIntact, long EndUs);

    /// <summary>
    /// Four bulk streams (urgency 3, incremental) fill a 20 Mbit/s link; a fifth stream sends a 64 KB message every
    /// 150 ms. Measures each message's latency (written at the sender to fully read at the receiver) and how many bulk
    /// bytes the receiver got meanwhile.
    /// </summary>
    private MessageRun RunMessagesOverBulk(int seed, double loss, int messageUrgency)
    {
        const int Messages = 8;
        const long MessageBytes = 64 * 1024;
        const long PeriodUs = 150_000;
        using QuicPair pair = NewPair(seed, loss);
        var app = new PriorityApp(pair);
        var bulk = new List<PriorityApp.Flow>();
        for (int i = 0; i < 4; i++) bulk.Add(app.Open(1_500_000));
        PriorityApp.Flow urgent = app.Open(0, urgency: messageUrgency, fin: false);
        long startUs = app.NowUs + 300_000; // the bulk streams have filled the pipe by then
        long[] writtenUs = new long[Messages];
        long[] bulkAtWrite = new long[Messages];
        long[] latencies = new long[Messages];
        long[] bulkDuring = new long[Messages];
        int sent = 0, done = 0;
        long BulkReceived() => bulk.Sum(f => f.Received);
        app.OnStep = a =>
        {
            while (done < sent && urgent.Received >= (done + 1) * MessageBytes)
            {
                latencies[done] = a.NowUs - writtenUs[done];
                bulkDuring[done] = BulkReceived() - bulkAtWrite[done];
                done++;
            }
            if (sent < Messages && a.NowUs >= startUs + sent * PeriodUs)
            {
                writtenUs[sent] = a.NowUs;
                bulkAtWrite[sent] = BulkReceived();
                urgent.Target += MessageBytes;
                if (sent == Messages - 1) urgent.FinRequested = true;
                sent++;
            }
        };
        long bulkAtStart = -1, bulkAtEnd = -1;
        SimRunResult result = pair.RunUntil(() =>
        {
            bool finished = app.Step();
            if (bulkAtStart < 0 && sent > 0) bulkAtStart = BulkReceived();
            if (bulkAtEnd < 0 && done == Messages) bulkAtEnd = BulkReceived();
            return finished;
        }, 60_000_000);
        output.WriteLine($"{result}: {done} of {sent} messages, {string.Join(", ", app.Flows.Select(f => $"{f.Id}: {f.Received}/{f.Target} sent {app.SentOffset(f)}"))} at {app.NowUs} us");
        Assert.Equal(Messages, done);
        return new MessageRun(latencies, bulkDuring, bulkAtEnd - bulkAtStart, writtenUs[^1] + latencies[^1] - writtenUs[0],
            app.Flows.TrueForAll(f => f.Intact), app.NowUs);
    }

    [Fact]
    public void UrgentMessagesStayFastWhileBulkStreamsFillThePipe()
    {
        (MessageRun urgent, _) = RunUrgentAndEqual(1501, loss: 0);
        // The urgent stream's messages complete within a few RTTs (the bottleneck queue the bulk streams keep full, the
        // message's own serialisation, one-way delay).
        Assert.True(urgent.LatenciesUs.Max() <= 5 * RttUs, $"urgent message latency {urgent.LatenciesUs.Max()} us above {5 * RttUs} us");
    }

    /// <summary>
    /// With 2 % loss a message also waits for the recovery of its own lost packets, and a run that loses a message's
    /// retransmission or hits a congestion event is slower: over seven seeds the slowest message of the typical run
    /// stays within 10 RTTs and that of the worst run within 16.
    /// </summary>
    [Fact]
    public void UrgentMessagesStayFastWhileBulkStreamsFillALossyPipe()
    {
        var slowest = new List<long>();
        for (int seed = 1502; seed <= 1508; seed++)
        {
            (MessageRun urgent, _) = RunUrgentAndEqual(seed, loss: 0.02);
            slowest.Add(urgent.LatenciesUs.Max());
        }
        slowest.Sort();
        output.WriteLine($"slowest urgent message per seed, ms: [{string.Join(", ", slowest.Select(l => (l / 1000.0).ToString("F1")))}]");
        Assert.True(slowest[slowest.Count / 2] <= 10 * RttUs, $"median run's slowest urgent message {slowest[slowest.Count / 2]} us above {10 * RttUs} us");
        Assert.True(slowest[^1] <= 16 * RttUs, $"worst run's slowest urgent message {slowest[^1]} us above {16 * RttUs} us");
    }

    // Runs the messages at urgency 0 and at the bulk streams' urgency over the same seed, and checks what must hold in
    // every run: all streams intact, and the urgent messages faster than round-robin ones while bulk still progresses.
    private (MessageRun Urgent, MessageRun Equal) RunUrgentAndEqual(int seed, double loss)
    {
        MessageRun urgent = RunMessagesOverBulk(seed, loss, messageUrgency: 0);
        MessageRun equal = RunMessagesOverBulk(seed, loss, messageUrgency: StreamTable.DefaultUrgency);
        foreach ((string name, MessageRun run) in new[] { ("urgency 0", urgent), ("urgency 3 (same as bulk)", equal) })
        {
            output.WriteLine($"seed {seed} {name}: latency ms [{string.Join(", ", run.LatenciesUs.Select(l => (l / 1000.0).ToString("F1")))}], " +
                $"bulk KB during each [{string.Join(", ", run.BulkBytesDuringMessage.Select(b => b / 1024))}], bulk KB in the message phase {run.BulkReceivedInPhase / 1024} over {run.PhaseUs / 1000} ms, end {run.EndUs / 1000} ms");
            Assert.True(run.AllIntact); // every stream, bulk and messages, byte-exact with its FIN
        }

        // Faster than any message sent at the bulk streams' urgency, which shares the link round-robin with them ...
        Assert.True(urgent.LatenciesUs.Max() < equal.LatenciesUs.Min(), $"seed {seed}: prioritised messages were not faster than round-robin ones");
        Assert.True(urgent.BulkBytesDuringMessage.Max() < equal.BulkBytesDuringMessage.Min());
        // ... while the bulk streams still make progress in the gaps between messages.
        Assert.True(urgent.BulkReceivedInPhase > 100_000, $"seed {seed}: bulk got only {urgent.BulkReceivedInPhase} bytes during the message phase");
        return (urgent, equal);
    }

    /// <summary>
    /// Within one urgency, non-incremental streams are sent one at a time in stream-id order, before the incremental
    /// ones; incremental streams share round-robin; a more urgent level goes first whatever the ids.
    /// </summary>
    [Fact]
    public void OrderWithinAndAcrossUrgencyLevels()
    {
        const long Size = 200_000;
        (PriorityApp.Flow[] Flows, long[] FirstSentUs, long[] AllSentUs) Run(params (int Urgency, bool Incremental)[] priorities)
        {
            using QuicPair pair = NewPair(1510, loss: 0, largeWindows: true);
            var app = new PriorityApp(pair);
            PriorityApp.Flow[] flows = priorities.Select(p => app.Open(Size, p.Urgency, p.Incremental)).ToArray();
            long start = app.NowUs;
            // Sender side (what the scheduler decides; the bottleneck queue drops packets, and a repaired hole would
            // blur the receiver's view): when each stream's first and last new byte went out.
            long[] firstSent = new long[flows.Length], allSent = new long[flows.Length];
            Array.Fill(firstSent, -1);
            Array.Fill(allSent, -1);
            app.OnStep = x =>
            {
                for (int i = 0; i < flows.Length; i++)
                {
                    long sent = x.SentOffset(flows[i]);
                    if (firstSent[i] < 0 && sent > 0) firstSent[i] = x.NowUs;
                    if (allSent[i] < 0 && sent >= Size) allSent[i] = x.NowUs;
                }
            };
            Assert.Equal(SimRunResult.ConditionMet, pair.RunUntil(app.Step, 30_000_000));
            Assert.All(flows, f => Assert.True(f.Intact));
            output.WriteLine(string.Join("; ", flows.Select((f, i) => $"id {f.Id} {priorities[i]}: first sent {(firstSent[i] - start) / 1000.0:F1} ms, all sent {(allSent[i] - start) / 1000.0:F1} ms, received {(f.DoneUs - start) / 1000.0:F1} ms")));
            return (flows, firstSent, allSent);
        }

        // Non-incremental: 0, then 4, then 8; no new byte of the next before all of the previous was sent.
        (_, long[] first, long[] all) = Run((3, false), (3, false), (3, false));
        Assert.True(first[1] >= all[0] && first[2] >= all[1]);

        // Incremental: all three start before any is fully sent, and they finish close together.
        (PriorityApp.Flow[] inc, first, all) = Run((3, true), (3, true), (3, true));
        Assert.All(first, f => Assert.True(f < all.Min()));
        Assert.True(all.Max() - all.Min() < (all.Max() - first.Min()) / 10, "incremental streams did not share the link");
        Assert.True(inc.Max(f => f.DoneUs) - inc.Min(f => f.DoneUs) < (inc.Max(f => f.DoneUs) - first.Min()) / 4);

        // Mixed at one urgency: the non-incremental ones (4, 8) first in id order, the incremental one (0) after.
        (_, first, all) = Run((3, true), (3, false), (3, false));
        Assert.True(first[2] >= all[1] && first[0] >= all[2]);

        // Across levels: urgency 1 (id 8) before urgency 2 (id 4) before urgency 6 (id 0), whatever the ids.
        (_, first, all) = Run((6, true), (2, true), (1, false));
        Assert.True(first[1] >= all[2] && first[0] >= all[1]);
    }

    /// <summary>
    /// Two bulk streams share the link round-robin; when the receiver has 200 KB of the first, the sender raises the
    /// second to urgency 0: from the next packet on, no new byte of the first is sent until all of the second was sent.
    /// Then the first completes; both byte-exact.
    /// </summary>
    [Theory]
    [InlineData(1520, 0.0)]
    [InlineData(1521, 0.02)]
    public void RaisingAPriorityMidTransferTakesEffectAtOnce(int seed, double loss)
    {
        using QuicPair pair = NewPair(seed, loss, largeWindows: true);
        var app = new PriorityApp(pair);
        PriorityApp.Flow a = app.Open(1_000_000), b = app.Open(1_000_000);
        long aSentAtChange = -1, bSentAtChange = -1, changeUs = -1, violations = 0, bAllSentUs = -1;
        app.OnStep = x =>
        {
            if (changeUs < 0 && a.Received >= 200_000)
            {
                changeUs = x.NowUs;
                aSentAtChange = x.SentOffset(a);
                bSentAtChange = x.SentOffset(b);
                Assert.True(x.Sender.SetStreamPriority(b.Id, 0, incremental: true));
            }
            else if (changeUs >= 0 && bAllSentUs < 0)
            {
                if (x.SentOffset(b) >= b.Target) bAllSentUs = x.NowUs;
                else if (x.SentOffset(a) != aSentAtChange) violations++;
            }
        };
        Assert.Equal(SimRunResult.ConditionMet, pair.RunUntil(app.Step, 60_000_000));
        output.WriteLine($"change at {changeUs / 1000} ms: a sent {aSentAtChange}, b sent {bSentAtChange}; b all sent at {bAllSentUs / 1000} ms, b done {b.DoneUs / 1000} ms, a done {a.DoneUs / 1000} ms");
        Assert.True(a.Intact && b.Intact);
        Assert.True(bSentAtChange < b.Target / 2, "the change came too late to show anything");
        Assert.Equal(0, violations);
        Assert.True(b.DoneUs < a.DoneUs);
    }

    /// <summary>
    /// Control frames are not starved: an urgency-0 stream saturates the link while RESET_STREAM (a reset urgency-7
    /// stream), STOP_SENDING (an urgency-7 stream whose read side the client aborts) and MAX_STREAM_DATA (1 MB the server
    /// sends to the client on an urgency-7 stream, four times the initial window) must all go out promptly.
    /// </summary>
    [Fact]
    public void ControlFramesAreNotStarvedByAnUrgentBulkStream()
    {
        using QuicPair pair = NewPair(1530, loss: 0, largeWindows: true); // the urgent stream never pauses for credit
        var app = new PriorityApp(pair);
        // The urgency-7 streams send a first byte (so the server has them) before the urgent bulk stream starts.
        PriorityApp.Flow toReset = app.Open(1_000_000, urgency: 7, fin: false);
        PriorityApp.Flow toStop = app.Open(1, urgency: 7, fin: false);
        PriorityApp.Flow download = app.Open(1, urgency: 7, fin: false);
        PriorityApp.Flow bulk = app.Open(0, urgency: 0, fin: false);
        const long DownloadBytes = 1 << 20;
        byte[] chunk = new byte[16 * 1024], read = new byte[64 * 1024];
        long start = app.NowUs, actUs = long.MaxValue, resetSeenUs = -1, stopSeenUs = -1, downloadDoneUs = -1, downloaded = 0, served = 0;
        bool acted = false, downloadCorrupt = false;
        app.OnStep = x =>
        {
            if (actUs == long.MaxValue && toStop.Received == 1 && download.Received == 1)
            {
                bulk.Target = 6_000_000;
                bulk.FinRequested = true;
                actUs = x.NowUs + 300_000;
            }
            if (!acted && x.NowUs >= actUs)
            {
                acted = true;
                x.Sender.ResetStream(toReset.Id, 42);
                x.Sender.StopSending(toStop.Id, 43);
            }
            if (acted && resetSeenUs < 0 && toReset.ResetReceived) resetSeenUs = x.NowUs;
            if (acted && stopSeenUs < 0 && x.Receiver.GetStopSendingCode(toStop.Id) == 43) stopSeenUs = x.NowUs;
            // The download: the server writes on the client's stream as its window allows; the client reads.
            if (acted && served < DownloadBytes && x.Receiver.Streams.TryGetStream(download.Id, out _))
            {
                int n = (int)Math.Min(chunk.Length, DownloadBytes - served);
                for (int i = 0; i < n; i++) chunk[i] = PriorityApp.Pattern(download.Id, served + i);
                served += x.Receiver.WriteStream(download.Id, chunk.AsSpan(0, n), served + n == DownloadBytes);
            }
            int got;
            while (downloadDoneUs < 0 && (got = x.Sender.ReadStream(download.Id, read, out bool fin, out _, out _)) >= 0)
            {
                for (int i = 0; i < got; i++) downloadCorrupt |= read[i] != PriorityApp.Pattern(download.Id, downloaded + i);
                downloaded += got;
                if (fin) downloadDoneUs = x.NowUs;
                if (got == 0) break;
            }
        };
        Assert.Equal(SimRunResult.ConditionMet, pair.RunUntil(() => app.Step() || (bulk.Done && downloadDoneUs >= 0 && resetSeenUs >= 0 && stopSeenUs >= 0), 60_000_000));
        output.WriteLine($"acted at {(actUs - start) / 1000} ms (bulk started 300 ms before): RESET_STREAM seen after {(resetSeenUs - actUs) / 1000.0:F1} ms, STOP_SENDING after {(stopSeenUs - actUs) / 1000.0:F1} ms, 1 MB download done after {(downloadDoneUs - actUs) / 1000.0:F1} ms, urgent bulk done after {(bulk.DoneUs - actUs) / 1000.0:F1} ms");
        Assert.True(bulk.Intact);
        Assert.True(toReset.ResetReceived);
        Assert.True(resetSeenUs - actUs <= 10 * RttUs, "RESET_STREAM starved");
        Assert.True(stopSeenUs - actUs <= 10 * RttUs, "STOP_SENDING starved");
        Assert.False(downloadCorrupt);
        Assert.Equal(DownloadBytes, downloaded);
        Assert.True(toReset.Received < 1_000_000); // the urgent stream did hold the reset one back
        Assert.True(downloadDoneUs < bulk.DoneUs - 1_000_000, "MAX_STREAM_DATA starved: the download waited for the urgent bulk stream");
    }

    /// <summary>
    /// Retransmissions go first regardless of priority: an urgency-7 stream has sent 500 KB over a lossy link, and a loss
    /// of it was just declared, when an urgency-0 stream starts 4 MB (and never pauses for credit). The low-priority stream's new data waits, but the
    /// holes in what it had already sent are repaired at once: the receiver can read all of those 500 KB within a few
    /// RTTs, not after the urgent stream's last byte.
    /// </summary>
    [Fact]
    public void LostDataOfALowPriorityStreamIsRetransmittedBeforeNewUrgentData()
    {
        using QuicPair pair = NewPair(1540, loss: 0.03, largeWindows: true);
        var app = new PriorityApp(pair);
        PriorityApp.Flow low = app.Open(2_000_000, urgency: 7);
        PriorityApp.Flow? urgent = null;
        long urgentStartUs = -1, lowSentAtStart = -1, lowReceivedAtStart = -1, repairedUs = -1;
        app.OnStep = x =>
        {
            // Start when a loss of the low-priority stream was just declared: a hole waits for its retransmission.
            if (urgent is null && x.SentOffset(low) >= 500_000 && x.Sender.Streams.TryGetStream(low.Id, out TransportStream? s) && s.Send!.HasRetransmission)
            {
                urgent = x.Open(4_000_000, urgency: 0);
                urgentStartUs = x.NowUs;
                lowSentAtStart = x.SentOffset(low);
                lowReceivedAtStart = low.Received;
            }
            if (urgent is not null && repairedUs < 0 && low.Received >= lowSentAtStart) repairedUs = x.NowUs;
        };
        Assert.Equal(SimRunResult.ConditionMet, pair.RunUntil(() => app.Step() && urgent is not null, 60_000_000));
        output.WriteLine($"at the urgent stream's start the low-priority one had sent {lowSentAtStart} bytes, the receiver read {lowReceivedAtStart}; " +
            $"all {lowSentAtStart} readable after {(repairedUs - urgentStartUs) / 1000.0:F1} ms; urgent done after {(urgent!.DoneUs - urgentStartUs) / 1000.0:F1} ms, " +
            $"low done after {(low.DoneUs - urgentStartUs) / 1000.0:F1} ms; lost packets {pair.ClientConnection!.Statistics.PacketsLost}");
        Assert.True(low.Intact && urgent.Intact);
        Assert.True(lowReceivedAtStart < lowSentAtStart);
        Assert.True(repairedUs - urgentStartUs <= 10 * RttUs, "the low-priority stream's retransmissions waited for the urgent stream");
        Assert.True(urgent.DoneUs - urgentStartUs > 50 * RttUs); // the urgent stream kept the link busy meanwhile
        Assert.True(low.DoneUs > urgent.DoneUs); // and the low-priority stream's new data did wait
    }
}
