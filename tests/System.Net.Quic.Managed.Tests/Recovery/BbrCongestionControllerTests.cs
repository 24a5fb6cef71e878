using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Recovery;

/// <summary>
/// BBRv3 (draft-ietf-ccwg-bbr) on synthetic ACK sequences: a fluid bottleneck model (rate, base RTT, per-packet ACKs,
/// chosen losses) drives <see cref="BbrCongestionController"/> through <see cref="RecoveryController{TMeta}"/> exactly as a
/// connection does, with BBR's own pacing rate in <see cref="Pacer"/>.
/// </summary>
public class BbrCongestionControllerTests(ITestOutputHelper output)
{
    private const int Mds = 1200;

    /// <summary>A sender with unlimited data (unless <see cref="AppRateBytesPerSecond"/> limits it) over one bottleneck.</summary>
    private sealed class Harness
    {
        private readonly Queue<(long Pn, long ArriveUs, bool Lost)> _pending = new();
        private readonly AckRange[] _range = new AckRange[1];
        private long _pn;
        private long _bottleneckFreeUs;
        private long _appCredit;
        private long _appLastUs;
        private Sink _sink;

        public Harness(long rateBytesPerSecond, long baseRttUs, ulong seed = 1)
        {
            RateBytesPerSecond = rateBytesPerSecond;
            BaseRttUs = baseRttUs;
            Bbr = new BbrCongestionController(Mds, seed);
            Recovery = new RecoveryController<int>(isServer: true, Bbr);
            Recovery.OnHandshakeConfirmed(0);
            Pacer = new Pacer(Mds, rateSource: Bbr);
        }

        private struct Sink : ISentPacketSink<int>
        {
            public void OnPacketAcked(PacketNumberSpace space, in SentPacket<int> packet)
            {
            }

            public void OnPacketLost(PacketNumberSpace space, in SentPacket<int> packet)
            {
            }
        }

        public BbrCongestionController Bbr { get; }
        public RecoveryController<int> Recovery { get; }
        public Pacer Pacer { get; }
        public long RateBytesPerSecond { get; set; }
        public long BaseRttUs { get; set; }
        public long NowUs { get; private set; }

        /// <summary>Which packet numbers the path drops.</summary>
        public Func<long, bool> Drops { get; set; } = _ => false;

        /// <summary>When set, the application offers only this many bytes per second.</summary>
        public long AppRateBytesPerSecond { get; set; }

        /// <summary>When false, the harness does not tell BBR that it is application limited (to show what that costs).</summary>
        public bool ReportAppLimited { get; set; } = true;

        /// <summary>Called after every ACK / loss event.</summary>
        public Action? OnEvent { get; set; }

        public void RunFor(long durationUs) => RunUntil(() => false, durationUs);

        public void RunUntil(Func<bool> condition, long maxDurationUs)
        {
            long end = NowUs + maxDurationUs;
            while (NowUs < end && !condition())
            {
                SendWhatIsAllowed();
                long nextSend = Bbr.CanSend(Mds) && HasAppData()
                    ? Pacer.GetNextSendTimeUs(Mds, NowUs, 0, 0, false)
                    : long.MaxValue;
                if (AppRateBytesPerSecond > 0 && !HasAppData()) nextSend = NowUs + 1_000;
                long nextAck = _pending.Count > 0 ? _pending.Peek().ArriveUs : long.MaxValue;
                long next = Math.Min(Math.Min(nextSend, nextAck), end);
                if (next == long.MaxValue) break;
                NowUs = Math.Max(next, NowUs);
                DeliverDue();
            }
        }

        private bool HasAppData()
        {
            if (AppRateBytesPerSecond == 0) return true;
            _appCredit = Math.Min(_appCredit + (NowUs - _appLastUs) * AppRateBytesPerSecond / 1_000_000, 4 * Mds);
            _appLastUs = NowUs;
            return _appCredit >= Mds;
        }

        private void SendWhatIsAllowed()
        {
            while (true)
            {
                if (!Bbr.CanSend(Mds)) return;
                if (Pacer.GetNextSendTimeUs(Mds, NowUs, 0, 0, false) > NowUs) return;
                if (!HasAppData())
                {
                    if (ReportAppLimited) Recovery.OnApplicationLimited(NowUs);
                    return;
                }

                if (AppRateBytesPerSecond > 0) _appCredit -= Mds;
                long pn = _pn++;
                Recovery.OnPacketSent(PacketNumberSpace.ApplicationData, pn, NowUs, Mds, ackEliciting: true, inFlight: true, 0);
                Pacer.OnPacketSent(Mds, NowUs, 0, 0, false);
                // Serialized at the bottleneck (FIFO, no drops from the queue), then half the base RTT each way.
                long start = Math.Max(NowUs, _bottleneckFreeUs);
                _bottleneckFreeUs = start + Mds * 1_000_000L / RateBytesPerSecond;
                bool lost = Drops(pn);
                _pending.Enqueue((pn, _bottleneckFreeUs + BaseRttUs, lost));
            }
        }

        private void DeliverDue()
        {
            while (_pending.Count > 0 && _pending.Peek().ArriveUs <= NowUs)
            {
                (long pn, _, bool lost) = _pending.Dequeue();
                if (lost) continue; // found lost by the packet threshold when later packets are acknowledged
                long rttBefore = Recovery.Rtt.HasSample ? Recovery.Rtt.MinRttUs : -1;
                _range[0] = new AckRange(pn, pn);
                AckProcessingResult r = Recovery.OnAckReceived(PacketNumberSpace.ApplicationData, _range, 0, null, NowUs, ref _sink);
                Assert.False(r.IsError);
                _ = rttBefore;
                OnEvent?.Invoke();
            }
        }
    }

    [Fact]
    public void DeliveryRateEstimatorMeasuresTheBottleneck()
    {
        // 1.2 MB/s bottleneck (one 1200-byte packet per ms), 40 ms RTT.
        var h = new Harness(1_200_000, 40_000);
        h.RunFor(2_000_000);
        output.WriteLine($"max_bw {h.Bbr.MaxBandwidth:F0} B/s, last sample {h.Bbr.LastDeliveryRate:F0}, min_rtt {h.Bbr.MinRttUs} us, state {h.Bbr.State}");
        Assert.InRange(h.Bbr.MaxBandwidth, 1_200_000 * 0.97, 1_200_000 * 1.03);
        Assert.InRange(h.Bbr.MinRttUs, 40_000, 42_000);
        Assert.True(h.Bbr.Delivered > 1_500_000);
    }

    [Fact]
    public void StartupExitsWhenBandwidthPlateausForThreeRoundsThenDrainsIntoProbeBw()
    {
        var h = new Harness(2_500_000, 50_000); // 20 Mbit/s, 50 ms
        long plateauRound = -1, exitRound = -1;
        var states = new List<BbrState>();
        h.OnEvent = () =>
        {
            if (plateauRound < 0 && h.Bbr.MaxBandwidth >= 0.95 * h.RateBytesPerSecond) plateauRound = h.Bbr.RoundCount;
            if (exitRound < 0 && h.Bbr.State != BbrState.Startup) exitRound = h.Bbr.RoundCount;
            if (states.Count == 0 || states[^1] != h.Bbr.State) states.Add(h.Bbr.State);
        };
        h.RunFor(20_000_000);
        output.WriteLine($"plateau at round {plateauRound}, Startup left at round {exitRound}; states {string.Join(" ", states.Take(12))}");
        Assert.True(plateauRound > 0);
        // Full bandwidth is declared after three rounds without 25 % growth (the round that ends counts too).
        Assert.InRange(exitRound - plateauRound, 2, 4);
        Assert.Equal([BbrState.Startup, BbrState.Drain], states.Take(2));
        // Drain ends in ProbeBW_DOWN, which hands over to CRUISE on the same ACK when the queue is already gone.
        Assert.True(states[2] is BbrState.ProbeBwDown or BbrState.ProbeBwCruise, states[2].ToString());
        Assert.True(h.Bbr.FullBandwidthReached);
        Assert.Equal(long.MaxValue, h.Bbr.InflightLo); // no loss: no short-term bound
    }

    [Fact]
    public void ProbeBwCyclesThroughDownCruiseRefillUp()
    {
        var h = new Harness(2_500_000, 50_000, seed: 3);
        var transitions = new List<BbrState>();
        var upGains = new HashSet<double>();
        h.OnEvent = () =>
        {
            if (transitions.Count == 0 || transitions[^1] != h.Bbr.State) transitions.Add(h.Bbr.State);
            if (h.Bbr.State == BbrState.ProbeBwUp) upGains.Add(h.Bbr.PacingGain);
        };
        h.RunFor(30_000_000);
        string seq = string.Join(" ", transitions);
        output.WriteLine(seq);
        output.WriteLine($"cycles {h.Bbr.CycleCount}, max_bw {h.Bbr.MaxBandwidth:F0}, pacing {h.Bbr.PacingRateBytesPerSecond}, cwnd {h.Bbr.CongestionWindow}");
        // The cycle (CRUISE -> REFILL -> UP -> DOWN -> CRUISE) repeats every 2-3 s; ProbeRTT comes in between (this path's
        // RTT never drops below its first sample) and hands back to CRUISE.
        Assert.Contains("ProbeBwCruise ProbeBwRefill ProbeBwUp ProbeBwDown ProbeBwCruise", seq);
        int cycles = (seq.Length - seq.Replace("ProbeBwRefill ProbeBwUp ProbeBwDown", "").Length) / "ProbeBwRefill ProbeBwUp ProbeBwDown".Length;
        Assert.InRange(cycles, 5, 15); // a probe every 2-3 s of ProbeBW; ProbeRTT every 5 s restarts the wait
        Assert.True(h.Bbr.CycleCount >= cycles - 1, $"max-bw filter advanced {h.Bbr.CycleCount} times in {cycles} cycles");
        Assert.Equal([BbrCongestionController.ProbeBwUpPacingGain], upGains);
        // Steady state: pacing near the bottleneck (gains 0.9-1.25, 1 % margin); the window about 2 BDP.
        Assert.InRange(h.Bbr.PacingRateBytesPerSecond, 2_500_000 * 0.85, 2_500_000 * 1.3);
        Assert.InRange(h.Bbr.MaxBandwidth, 2_500_000 * 0.95, 2_500_000 * 1.1);
    }

    [Fact]
    public void StartupExitsOnLossAboveTwoPercent()
    {
        // A bottleneck so fast that Startup would keep growing for a long time; every 10th packet is dropped (10 %).
        var h = new Harness(250_000_000, 50_000) { Drops = pn => pn > 100 && pn % 10 == 0 };
        long exitRound = -1;
        h.OnEvent = () => { if (exitRound < 0 && h.Bbr.State != BbrState.Startup) exitRound = h.Bbr.RoundCount; };
        h.RunUntil(() => exitRound >= 0, 5_000_000);
        output.WriteLine($"exit at round {exitRound}, max_bw {h.Bbr.MaxBandwidth:F0} of {h.RateBytesPerSecond}, inflight_hi {h.Bbr.InflightHi}");
        Assert.True(h.Bbr.FullBandwidthReached);
        Assert.NotEqual(long.MaxValue, h.Bbr.InflightHi); // the loss set the long-term bound
        Assert.True(h.Bbr.MaxBandwidth < 0.5 * h.RateBytesPerSecond, "Startup ended by bandwidth plateau, not by loss");
    }

    [Fact]
    public void StartupIgnoresLossBelowTwoPercent()
    {
        // Every 100th packet dropped (1 %): below BBRLossThresh, so Startup runs until the bandwidth plateaus.
        var h = new Harness(2_500_000, 50_000) { Drops = pn => pn > 100 && pn % 100 == 0 };
        h.RunUntil(() => h.Bbr.State != BbrState.Startup, 10_000_000);
        output.WriteLine($"left Startup at {h.NowUs} us, max_bw {h.Bbr.MaxBandwidth:F0}, inflight_hi {h.Bbr.InflightHi}");
        Assert.InRange(h.Bbr.MaxBandwidth, 0.95 * h.RateBytesPerSecond, 1.05 * h.RateBytesPerSecond);
        Assert.Equal(long.MaxValue, h.Bbr.InflightHi);
    }

    [Fact]
    public void ProbeRttEntersFiveSecondsAfterTheLastNewMinRttAndCutsTheWindow()
    {
        var h = new Harness(2_500_000, 50_000);
        long entered = -1, exited = -1, minCwndInProbeRtt = long.MaxValue;
        h.OnEvent = () =>
        {
            if (h.Bbr.State == BbrState.ProbeRtt)
            {
                if (entered < 0) entered = h.NowUs;
                minCwndInProbeRtt = Math.Min(minCwndInProbeRtt, h.Bbr.CongestionWindow);
            }
            else if (entered >= 0 && exited < 0)
            {
                exited = h.NowUs;
            }
        };
        h.RunFor(12_000_000);
        long bdp = 2_500_000L * 50_000 / 1_000_000;
        output.WriteLine($"ProbeRTT {entered} .. {exited} us, cwnd down to {minCwndInProbeRtt} (BDP {bdp})");
        // The RTT never falls below its first sample (constant path), so the ProbeRTT interval (5 s) expires; the
        // first samples come after about one RTT.
        Assert.InRange(entered, 5_000_000, 5_400_000);
        Assert.True(minCwndInProbeRtt <= Math.Max(bdp / 2 + 4 * Mds, 4 * Mds));
        Assert.True(exited - entered >= BbrCongestionController.ProbeRttDurationUs);
        Assert.True(exited - entered < 600_000, $"ProbeRTT lasted {exited - entered} us");
        Assert.NotEqual(BbrState.ProbeRtt, h.Bbr.State);
    }

    [Fact]
    public void NoProbeRttWhileTheMinRttKeepsFalling()
    {
        var h = new Harness(2_500_000, 60_000);
        h.RunFor(1_000_000);
        long firstMin = h.Bbr.MinRttUs;
        bool probed = false;
        h.OnEvent = () =>
        {
            // A path whose propagation delay drops 100 us per second: every second brings a new minimum.
            h.BaseRttUs = 60_000 - h.NowUs / 10_000;
            probed |= h.Bbr.State == BbrState.ProbeRtt;
        };
        h.RunFor(12_000_000);
        Assert.False(probed);
        Assert.True(h.Bbr.MinRttUs < firstMin - 500, $"min_rtt {firstMin} -> {h.Bbr.MinRttUs} us");
    }

    [Fact]
    public void MinRttFilterForgetsAMinimumOlderThanTenSeconds()
    {
        var h = new Harness(2_500_000, 20_000);
        h.RunFor(1_000_000);
        Assert.InRange(h.Bbr.MinRttUs, 20_000, 21_000);
        h.BaseRttUs = 60_000; // the path got longer
        h.RunFor(7_000_000);
        Assert.InRange(h.Bbr.MinRttUs, 20_000, 21_000); // still within MinRTTFilterLen
        h.RunFor(5_000_000);
        Assert.True(h.Bbr.MinRttUs >= 60_000, $"min_rtt {h.Bbr.MinRttUs} us 12 s later");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void AppLimitedSamplesDoNotLowerTheMaxBandwidth(bool reportAppLimited)
    {
        var h = new Harness(2_500_000, 50_000);
        h.RunFor(5_000_000);
        double before = h.Bbr.MaxBandwidth;
        Assert.InRange(before, 2_500_000 * 0.95, 2_500_000 * 1.1);

        // The application now offers a tenth of the bottleneck for 20 s (several ProbeBW cycles).
        h.AppRateBytesPerSecond = 250_000;
        h.ReportAppLimited = reportAppLimited;
        h.RunFor(20_000_000);
        output.WriteLine($"report {reportAppLimited}: max_bw {before:F0} -> {h.Bbr.MaxBandwidth:F0}, cycles {h.Bbr.CycleCount}");
        if (reportAppLimited)
        {
            Assert.True(h.Bbr.MaxBandwidth >= 0.95 * before, $"max_bw fell from {before:F0} to {h.Bbr.MaxBandwidth:F0}");
        }
        else
        {
            // The same samples unmarked would have dragged the estimate down to the application's rate.
            Assert.True(h.Bbr.MaxBandwidth < 0.5 * before, $"max_bw stayed at {h.Bbr.MaxBandwidth:F0}");
        }
    }

    [Fact]
    public void OnePercentRandomLossCostsFarLessThanHalving()
    {
        // 1 % loss spread evenly. BBRv3 lowers its short-term bound bw_lo towards the measured rate in each lossy round
        // (and resets it every probe), but never halves: a Reno-like controller would get about 1.22 / sqrt(p) = 12
        // packets per RTT here, 12 % of this 104-packet BDP.
        var h = new Harness(2_500_000, 50_000) { Drops = pn => pn % 100 == 57 };
        h.RunFor(5_000_000);
        long before = h.Bbr.Delivered;
        h.RunFor(10_000_000);
        double rate = (h.Bbr.Delivered - before) / 10.0;
        output.WriteLine($"delivered {rate:F0} B/s of {h.RateBytesPerSecond}; bw_lo-bounded bw {h.Bbr.Bandwidth:F0}, inflight_hi {h.Bbr.InflightHi}");
        Assert.True(rate > 0.45 * h.RateBytesPerSecond, $"{rate:F0} B/s");
    }

    [Fact]
    public void PacerFollowsBbrPacingRate()
    {
        var bbr = new BbrCongestionController(Mds);
        var pacer = new Pacer(Mds, burstPackets: 1, rateSource: bbr);
        long rate = bbr.PacingRateBytesPerSecond;
        Assert.True(rate > 0);
        pacer.OnPacketSent(Mds, 1_000, congestionWindow: 1, smoothedRttUs: 1_000_000, inSlowStart: false);
        long next = pacer.GetNextSendTimeUs(Mds, 1_000, congestionWindow: 1, smoothedRttUs: 1_000_000, inSlowStart: false);
        // One packet's worth of tokens at the BBR rate, whatever the window and RTT arguments say.
        long expected = 1_000 + (Mds * 1_000_000L + rate - 1) / rate;
        Assert.Equal(expected, next);
    }
}
