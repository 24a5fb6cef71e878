namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// BBR version 3 as specified by its authors in draft-ietf-ccwg-bbr: a model of the path (maximum delivery rate and
/// minimum RTT, bounded by loss-driven short-term limits inflight_lo/bw_lo and a long-term inflight_hi) drives the
/// pacing rate and the congestion window. Sizes are bytes, times microseconds, rates bytes per second. The connection's
/// delivery-rate estimator (draft §4.5.2: C.delivered, C.delivered_time, C.first_sent_time, C.app_limited, C.lost) lives
/// here; the per-packet half of it travels with each sent packet (<see cref="PacketDeliveryState"/>). Sans-IO and
/// allocation free: time is a parameter and randomness comes from a seeded generator.
/// </summary>
internal sealed class BbrCongestionController : IRateSamplingCongestionController
{
    /// <summary>BBRStartupPacingGain = 4 ln 2: doubles the sending rate each round. draft §2.7.</summary>
    public const double StartupPacingGain = 2.77;

    /// <summary>BBRStartupCwndGain.</summary>
    public const double StartupCwndGain = 2.0;

    /// <summary>BBRDrainPacingGain: drains Startup's queue in about one round.</summary>
    public const double DrainPacingGain = 0.35;

    /// <summary>ProbeBW_DOWN pacing gain.</summary>
    public const double ProbeBwDownPacingGain = 0.90;

    /// <summary>ProbeBW_UP pacing gain.</summary>
    public const double ProbeBwUpPacingGain = 1.25;

    /// <summary>cwnd_gain in ProbeBW (all phases but UP).</summary>
    public const double ProbeBwCwndGain = 2.0;

    /// <summary>cwnd_gain in ProbeBW_UP.</summary>
    public const double ProbeBwUpCwndGain = 2.25;

    /// <summary>BBRProbeRTTCwndGain.</summary>
    public const double ProbeRttCwndGain = 0.5;

    /// <summary>BBRLossThresh: the highest loss rate (over a round) BBR tolerates while probing. 2 %.</summary>
    public const double LossThreshold = 0.02;

    /// <summary>BBRBeta: multiplicative cut of the short-term bounds on loss.</summary>
    public const double Beta = 0.7;

    /// <summary>BBRHeadroom: share of inflight_hi left to other flows while cruising.</summary>
    public const double Headroom = 0.15;

    /// <summary>BBRStartupFullLossCnt: discontiguous lost ranges in a round needed to leave Startup on loss.</summary>
    public const int StartupFullLossCount = 6;

    /// <summary>Rounds without 25 % delivery-rate growth after which the pipe counts as full.</summary>
    public const int StartupFullBwRounds = 3;

    /// <summary>MinRTTFilterLen: 10 s.</summary>
    public const long MinRttFilterLengthUs = 10_000_000;

    /// <summary>ProbeRTTInterval: 5 s.</summary>
    public const long ProbeRttIntervalUs = 5_000_000;

    /// <summary>ProbeRTTDuration: 200 ms.</summary>
    public const long ProbeRttDurationUs = 200_000;

    /// <summary>BBRPacingMarginPercent: pace 1 % below the estimated bandwidth.</summary>
    public const double PacingMargin = 0.01;

    private const long Infinite = long.MaxValue;
    private const int ExtraAckedBucketRounds = 5; // two buckets: a 10-round max filter (BBRExtraAckedFilterLen).

    private readonly long _initialWindow;
    private readonly long _minPipeCwnd;
    private ulong _random;

    // Connection delivery state (C.*).
    private long _delivered;
    private long _deliveredTimeUs;
    private long _firstSentTimeUs;
    private long _appLimited;
    private long _lost;
    private long _lastLostPacketNumber = -2;

    // The rate sample built from one ACK (rs.*).
    private bool _rsHasData;
    private long _rsPriorDelivered;
    private long _rsSendElapsedUs;
    private long _rsAckElapsedUs;
    private long _rsTxInFlight;
    private long _rsLostAtSend;
    private long _rsRttUs = -1;
    private bool _rsIsAppLimited;
    private long _rsNewlyAcked;
    private long _rsNewlyLost;
    private long _rsDelivered;
    private long _rsLost;
    private double _rsDeliveryRate;

    // Model and state machine (BBR.*).
    private long _cwnd;
    private double _pacingRate;
    private double _pacingGain = StartupPacingGain;
    private double _cwndGain = StartupCwndGain;
    private long _sendQuantum;
    private readonly double[] _maxBwFilter = new double[2];
    private double _maxBw;
    private double _bw;
    private double _bwLo = double.PositiveInfinity;
    private double _bwLatest;
    private long _inflightHi = Infinite;
    private long _inflightLo = Infinite;
    private long _inflightLatest;
    private long _maxInflight;
    private long _minRttUs = Infinite;
    private long _minRttStampUs;
    private long _probeRttMinDelayUs = Infinite;
    private long _probeRttMinStampUs;
    private bool _probeRttExpired;
    private long _probeRttDoneStampUs;
    private bool _probeRttRoundDone;
    private long _priorCwnd;
    private bool _idleRestart;
    private long _nextRoundDelivered;
    private bool _roundStart;
    private long _roundCount;
    private long _roundsSinceBwProbe;
    private long _cycleCount;
    private long _cycleStampUs;
    private long _bwProbeWaitUs;
    private bool _bwProbeSamples;
    private long _bwProbeUpCount = Infinite;
    private long _bwProbeUpAcks;
    private int _bwProbeUpRounds;
    private AckPhase _ackPhase;
    private double _fullBw;
    private int _fullBwCount;
    private bool _fullBwNow;
    private bool _lossInRound;
    private long _lossRoundDelivered;
    private bool _lossRoundStart;
    private int _lossEventsInRound;
    private bool _inLossRecovery;
    private bool _packetConservation;
    private long _conservationEndDelivered;
    private readonly long[] _extraAckedBuckets = new long[2];
    private int _extraAckedIndex;
    private int _extraAckedBucketRounds;
    private long _extraAcked;
    private long _extraAckedIntervalStartUs;
    private long _extraAckedDelivered;

    private enum AckPhase : byte
    {
        Init,
        ProbeStopping,
        Refilling,
        ProbeStarting,
        ProbeFeedback,
    }

    /// <param name="maxDatagramSize">max_datagram_size (SMSS).</param>
    /// <param name="seed">Seeds the randomized ProbeBW wait (any value; deterministic for a given seed).</param>
    public BbrCongestionController(int maxDatagramSize, ulong seed = 0x9E3779B97F4A7C15UL)
    {
        if (maxDatagramSize < 1200)
        {
            throw new ArgumentOutOfRangeException(nameof(maxDatagramSize));
        }

        MaxDatagramSize = maxDatagramSize;
        _random = seed == 0 ? 0x9E3779B97F4A7C15UL : seed;
        _initialWindow = RecoveryConstants.InitialWindow(maxDatagramSize);
        _minPipeCwnd = 4L * maxDatagramSize;
        _cwnd = _initialWindow;
        // BBRInitPacingRate: no RTT sample yet, so nominal bandwidth = InitialCwnd / 1 ms.
        _pacingRate = StartupPacingGain * _initialWindow * 1000.0;
        _sendQuantum = 2L * maxDatagramSize;
        _maxInflight = _initialWindow;
        EnterStartup();
    }

    public int MaxDatagramSize { get; }

    public long CongestionWindow => _cwnd;

    public long BytesInFlight { get; private set; }

    public long SlowStartThreshold => long.MaxValue;

    public bool InSlowStart => State == BbrState.Startup;

    public long RecoveryStartTimeUs { get; private set; } = long.MinValue;

    public long AvailableWindow => Math.Max(0, _cwnd - BytesInFlight);

    public long PacingRateBytesPerSecond => Math.Max(1, (long)_pacingRate);

    /// <summary>The current state (ProbeBW split into its phases).</summary>
    public BbrState State { get; private set; }

    /// <summary>BBR.max_bw, bytes per second (0 before the first sample).</summary>
    internal double MaxBandwidth => _maxBw;

    /// <summary>BBR.bw = min(max_bw, bw_lo).</summary>
    internal double Bandwidth => _bw;

    /// <summary>BBR.min_rtt; long.MaxValue before the first sample.</summary>
    internal long MinRttUs => _minRttUs;

    internal bool FullBandwidthReached { get; private set; }

    internal long InflightHi => _inflightHi;

    internal long InflightLo => _inflightLo;

    internal long RoundCount => _roundCount;

    internal long CycleCount => _cycleCount;

    internal double PacingGain => _pacingGain;

    internal double CwndGain => _cwndGain;

    /// <summary>The last rate sample's delivery rate (0 when the sample was invalid).</summary>
    internal double LastDeliveryRate => _rsDeliveryRate;

    /// <summary>The last rate sample was application limited.</summary>
    internal bool LastSampleAppLimited => _rsIsAppLimited;

    /// <summary>C.delivered: bytes acknowledged so far.</summary>
    internal long Delivered => _delivered;

    /// <summary>C.lost: bytes declared lost so far.</summary>
    internal long Lost => _lost;

    public bool CanSend(int bytes) => BytesInFlight + bytes <= _cwnd;

    public bool IsInRecovery(long timeSentUs) => timeSentUs <= RecoveryStartTimeUs;

    // ---------------------------------------------------------------- delivery-rate estimator (draft §4.5.2)

    public PacketDeliveryState OnSending(int bytes, long nowUs)
    {
        if (BytesInFlight == 0)
        {
            // A new flight: the send and ack intervals start now.
            _firstSentTimeUs = nowUs;
            _deliveredTimeUs = nowUs;
            HandleRestartFromIdle(nowUs);
        }

        return new PacketDeliveryState
        {
            Delivered = _delivered,
            DeliveredTimeUs = _deliveredTimeUs,
            FirstSentTimeUs = _firstSentTimeUs,
            TxInFlight = BytesInFlight + bytes,
            Lost = _lost,
            IsAppLimited = _appLimited != 0,
        };
    }

    public void OnPacketSent(int bytes, long nowUs) => BytesInFlight += bytes;

    public void OnPacketDelivered(in PacketDeliveryState state, int bytes, long timeSentUs, long nowUs)
    {
        _delivered += bytes;
        _deliveredTimeUs = nowUs;
        _rsNewlyAcked += bytes;
        // The sample describes the most recently sent of the packets this ACK delivered.
        if (!_rsHasData || state.Delivered >= _rsPriorDelivered)
        {
            _rsHasData = true;
            _rsPriorDelivered = state.Delivered;
            _rsIsAppLimited = state.IsAppLimited;
            _rsSendElapsedUs = timeSentUs - state.FirstSentTimeUs;
            _rsAckElapsedUs = nowUs - state.DeliveredTimeUs;
            _rsTxInFlight = state.TxInFlight;
            _rsLostAtSend = state.Lost;
            _rsRttUs = nowUs - timeSentUs;
            _firstSentTimeUs = timeSentUs;
        }
    }

    public void OnPacketLost(in PacketDeliveryState state, long packetNumber, int bytes, long nowUs)
    {
        _lost += bytes;
        _rsNewlyLost += bytes;
        if (packetNumber != _lastLostPacketNumber + 1)
        {
            _lossEventsInRound++;
        }

        _lastLostPacketNumber = packetNumber;
        HandleLostPacket(in state, bytes, nowUs);
    }

    public void OnApplicationLimited(long nowUs) => _appLimited = Math.Max(_delivered + BytesInFlight, 1);

    /// <summary>BBRGenerateRateSample: turns the packets of one ACK into rs.delivery_rate. False when no valid sample.</summary>
    private bool GenerateRateSample(RttEstimator rtt)
    {
        if (_appLimited != 0 && _delivered > _appLimited)
        {
            _appLimited = 0; // the bubble of app-limited packets has been delivered
        }

        _rsDeliveryRate = 0;
        _rsDelivered = 0;
        _rsLost = 0;
        if (!_rsHasData)
        {
            return false;
        }

        _rsDelivered = _delivered - _rsPriorDelivered;
        _rsLost = _lost - _rsLostAtSend;
        // The longer of the send and ack phases, so neither ACK compression nor a send burst inflates the rate.
        long interval = Math.Max(_rsSendElapsedUs, _rsAckElapsedUs);
        long minRtt = rtt.HasSample ? rtt.MinRttUs : 0;
        if (interval <= 0 || interval < minRtt)
        {
            return false;
        }

        _rsDeliveryRate = _rsDelivered * 1e6 / interval;
        return true;
    }

    // ---------------------------------------------------------------- congestion controller events

    public void OnPacketsAcked(long ackedBytes, long largestAckedTimeSentUs, long priorBytesInFlight, long nowUs, RttEstimator rtt)
    {
        BytesInFlight = Math.Max(0, BytesInFlight - ackedBytes);
        if (_inLossRecovery && !IsInRecovery(largestAckedTimeSentUs))
        {
            // An acknowledgment of a packet sent after recovery started ends it (RFC 9002 §7.3.2): BBRRestoreCwnd.
            _inLossRecovery = false;
            _packetConservation = false;
            _cwnd = Math.Max(_cwnd, _priorCwnd);
        }

        GenerateRateSample(rtt);
        if (_packetConservation && _rsPriorDelivered >= _conservationEndDelivered)
        {
            _packetConservation = false; // one round of packet conservation
        }

        UpdateModelAndState(nowUs, priorBytesInFlight);
        UpdateControlParameters();
        _rsHasData = false;
        _rsNewlyAcked = 0;
        _rsNewlyLost = 0;
        _rsRttUs = -1;
    }

    public void OnPacketsLost(long lostBytes) => BytesInFlight = Math.Max(0, BytesInFlight - lostBytes);

    public void OnCongestionEvent(long timeSentUs, long nowUs)
    {
        if (IsInRecovery(timeSentUs))
        {
            return;
        }

        // A new RFC 9002 recovery period. BBR's loss recovery (draft §4.6.4.4, TCP's fast recovery episode) lasts until
        // a packet sent after the latest period started is acknowledged: only its start saves the window and conserves
        // packets for one round, so losses that keep coming (random loss) do not clamp the window again and again.
        RecoveryStartTimeUs = nowUs;
        if (_inLossRecovery)
        {
            return;
        }

        _priorCwnd = SaveCwnd();
        _inLossRecovery = true;
        _cwnd = Math.Max(BytesInFlight + MaxDatagramSize, _minPipeCwnd);
        _packetConservation = true;
        _conservationEndDelivered = _delivered + BytesInFlight;
    }

    public void OnPersistentCongestion(long nowUs)
    {
        // Like a retransmission timeout (draft §4.6.4.4 BBROnEnterRTO): remember the window, restart from the minimum.
        _priorCwnd = SaveCwnd();
        _cwnd = _minPipeCwnd;
        RecoveryStartTimeUs = long.MinValue;
        _inLossRecovery = false;
        _packetConservation = false;
    }

    public void OnPacketsDiscarded(long bytes) => BytesInFlight = Math.Max(0, BytesInFlight - bytes);

    // ---------------------------------------------------------------- model (draft §4.2 BBRUpdateModelAndState)

    private void UpdateModelAndState(long nowUs, long priorBytesInFlight)
    {
        UpdateLatestDeliverySignals();
        UpdateCongestionSignals();
        UpdateAckAggregation(nowUs);
        CheckFullBwReached();
        CheckStartupDone(nowUs);
        CheckDrainDone(nowUs);
        UpdateProbeBwCyclePhase(nowUs, priorBytesInFlight);
        UpdateMinRtt(nowUs);
        CheckProbeRtt(nowUs);
        AdvanceLatestDeliverySignals();
        BoundBwForModel();
    }

    private void UpdateControlParameters()
    {
        SetPacingRate();
        SetSendQuantum();
        SetCwnd();
    }

    private void UpdateRound()
    {
        if (_rsHasData && _rsPriorDelivered >= _nextRoundDelivered)
        {
            _nextRoundDelivered = _delivered;
            _roundCount++;
            _roundsSinceBwProbe++;
            _roundStart = true;
        }
        else
        {
            _roundStart = false;
        }
    }

    private void StartRound() => _nextRoundDelivered = _delivered;

    private void UpdateMaxBw()
    {
        UpdateRound();
        // App-limited samples only count when they show more bandwidth than known: they never lower the estimate.
        if (_rsDeliveryRate > 0 && (_rsDeliveryRate >= _maxBw || !_rsIsAppLimited))
        {
            _maxBwFilter[1] = Math.Max(_maxBwFilter[1], _rsDeliveryRate);
            _maxBw = Math.Max(_maxBwFilter[0], _maxBwFilter[1]);
        }
    }

    /// <summary>The max-bandwidth filter spans two ProbeBW cycles (MaxBwFilterLen = 2).</summary>
    private void AdvanceMaxBwFilter()
    {
        _cycleCount++;
        if (_maxBwFilter[1] == 0)
        {
            return; // no sample in the newest cycle: keep what we have
        }

        _maxBwFilter[0] = _maxBwFilter[1];
        _maxBwFilter[1] = 0;
        _maxBw = _maxBwFilter[0];
    }

    private void UpdateLatestDeliverySignals()
    {
        _lossRoundStart = false;
        _bwLatest = Math.Max(_bwLatest, _rsDeliveryRate);
        _inflightLatest = Math.Max(_inflightLatest, _rsDelivered);
        if (_rsHasData && _rsPriorDelivered >= _lossRoundDelivered)
        {
            _lossRoundDelivered = _delivered;
            _lossRoundStart = true;
        }
    }

    private void AdvanceLatestDeliverySignals()
    {
        if (_lossRoundStart)
        {
            _bwLatest = _rsDeliveryRate;
            _inflightLatest = _rsDelivered;
        }
    }

    private void UpdateCongestionSignals()
    {
        UpdateMaxBw();
        if (_rsLost > 0 || _rsNewlyLost > 0)
        {
            _lossInRound = true;
        }

        if (!_lossRoundStart)
        {
            return;
        }

        AdaptLowerBoundsFromCongestion();
        _lossInRound = false;
    }

    private void AdaptLowerBoundsFromCongestion()
    {
        if (IsProbingBw)
        {
            return;
        }

        if (_lossInRound)
        {
            // BBRInitLowerBounds + BBRLossLowerBounds.
            if (double.IsPositiveInfinity(_bwLo)) _bwLo = _maxBw;
            if (_inflightLo == Infinite) _inflightLo = _cwnd;
            _bwLo = Math.Max(_bwLatest, Beta * _bwLo);
            _inflightLo = Math.Max(_inflightLatest, (long)(Beta * _inflightLo));
        }
    }

    /// <summary>
    /// A new path: its bandwidth and RTT are unknown, so the model starts over from Startup with the initial window and
    /// pacing rate (the delivery-rate counters carry on: packets in flight were stamped with them).
    /// </summary>
    public void OnNewPath()
    {
        Array.Clear(_maxBwFilter);
        _maxBw = 0;
        _bw = 0;
        _minRttUs = Infinite;
        _probeRttMinDelayUs = Infinite;
        _inflightHi = Infinite;
        ResetLowerBounds();
        ResetCongestionSignals();
        ResetFullBw();
        _cwnd = _initialWindow;
        _maxInflight = _initialWindow;
        _pacingRate = StartupPacingGain * _initialWindow * 1000.0;
        RecoveryStartTimeUs = long.MinValue;
        EnterStartup();
    }

    private void ResetLowerBounds()
    {
        _bwLo = double.PositiveInfinity;
        _inflightLo = Infinite;
    }

    private void ResetCongestionSignals()
    {
        _lossInRound = false;
        _bwLatest = 0;
        _inflightLatest = 0;
    }

    private void BoundBwForModel() => _bw = Math.Min(_maxBw, _bwLo);

    private void UpdateAckAggregation(long nowUs)
    {
        long interval = nowUs - _extraAckedIntervalStartUs;
        long expected = (long)(_bw * interval / 1e6);
        if (_extraAckedDelivered <= expected)
        {
            // Start a new aggregation epoch.
            _extraAckedDelivered = 0;
            _extraAckedIntervalStartUs = nowUs;
            expected = 0;
        }

        _extraAckedDelivered += _rsNewlyAcked;
        long extra = Math.Min(_extraAckedDelivered - expected, _cwnd);
        if (_roundStart && ++_extraAckedBucketRounds >= ExtraAckedBucketRounds)
        {
            _extraAckedBucketRounds = 0;
            _extraAckedIndex ^= 1;
            _extraAckedBuckets[_extraAckedIndex] = 0;
        }

        _extraAckedBuckets[_extraAckedIndex] = Math.Max(_extraAckedBuckets[_extraAckedIndex], extra);
        _extraAcked = Math.Max(_extraAckedBuckets[0], _extraAckedBuckets[1]);
    }

    // ---------------------------------------------------------------- Startup and Drain

    private void EnterStartup()
    {
        State = BbrState.Startup;
        _pacingGain = StartupPacingGain;
        _cwndGain = StartupCwndGain;
    }

    private void ResetFullBw()
    {
        _fullBw = 0;
        _fullBwCount = 0;
        _fullBwNow = false;
    }

    private void CheckFullBwReached()
    {
        if (_fullBwNow || _rsIsAppLimited || _rsDeliveryRate <= 0)
        {
            return;
        }

        if (_rsDeliveryRate >= _fullBw * 1.25)
        {
            // Still growing: new baseline.
            ResetFullBw();
            _fullBw = _rsDeliveryRate;
            return;
        }

        if (!_roundStart)
        {
            return;
        }

        _fullBwCount++;
        _fullBwNow = _fullBwCount >= StartupFullBwRounds;
        if (_fullBwNow)
        {
            FullBandwidthReached = true;
        }
    }

    private void CheckStartupDone(long nowUs)
    {
        CheckStartupHighLoss();
        if (State == BbrState.Startup && FullBandwidthReached)
        {
            EnterDrain();
        }
    }

    /// <summary>Leave Startup when a round in loss recovery lost more than 2 % in at least 6 discontiguous ranges.</summary>
    private void CheckStartupHighLoss()
    {
        if (!FullBandwidthReached && _lossRoundStart && _inLossRecovery
            && _lossEventsInRound >= StartupFullLossCount && IsInflightTooHigh())
        {
            _inflightHi = Math.Max(Bdp(), _inflightLatest);
            FullBandwidthReached = true;
        }

        if (_lossRoundStart)
        {
            _lossEventsInRound = 0;
        }
    }

    private void EnterDrain()
    {
        State = BbrState.Drain;
        _pacingGain = DrainPacingGain;
        _cwndGain = StartupCwndGain;
    }

    private void CheckDrainDone(long nowUs)
    {
        if (State == BbrState.Drain && BytesInFlight <= Inflight(_bw, 1.0))
        {
            EnterProbeBw(nowUs);
        }
    }

    // ---------------------------------------------------------------- ProbeBW (draft §4.3.3)

    private void EnterProbeBw(long nowUs)
    {
        _cwndGain = ProbeBwCwndGain;
        StartProbeBwDown(nowUs);
    }

    private bool IsInProbeBwState => State is BbrState.ProbeBwDown or BbrState.ProbeBwCruise or BbrState.ProbeBwRefill or BbrState.ProbeBwUp;

    private bool IsProbingBw => State is BbrState.Startup or BbrState.ProbeBwRefill or BbrState.ProbeBwUp;

    private void StartProbeBwDown(long nowUs)
    {
        ResetCongestionSignals();
        _bwProbeUpCount = Infinite;
        PickProbeWait();
        _cycleStampUs = nowUs;
        _ackPhase = AckPhase.ProbeStopping;
        StartRound();
        State = BbrState.ProbeBwDown;
        _pacingGain = ProbeBwDownPacingGain;
        _cwndGain = ProbeBwCwndGain;
    }

    private void StartProbeBwCruise()
    {
        State = BbrState.ProbeBwCruise;
        _pacingGain = 1.0;
        _cwndGain = ProbeBwCwndGain;
    }

    private void StartProbeBwRefill()
    {
        ResetLowerBounds();
        _bwProbeUpRounds = 0;
        _bwProbeUpAcks = 0;
        _ackPhase = AckPhase.Refilling;
        StartRound();
        State = BbrState.ProbeBwRefill;
        _pacingGain = 1.0;
        _cwndGain = ProbeBwCwndGain;
    }

    private void StartProbeBwUp(long nowUs)
    {
        _ackPhase = AckPhase.ProbeStarting;
        StartRound();
        ResetFullBw();
        _fullBw = _rsDeliveryRate;
        _cycleStampUs = nowUs;
        State = BbrState.ProbeBwUp;
        _pacingGain = ProbeBwUpPacingGain;
        _cwndGain = ProbeBwUpCwndGain;
        RaiseInflightHiSlope();
    }

    /// <summary>Randomized wait before the next probe: 0-1 rounds and 2-3 s.</summary>
    private void PickProbeWait()
    {
        _roundsSinceBwProbe = (long)(NextRandom() & 1);
        _bwProbeWaitUs = 2_000_000 + (long)(NextRandom() % 1_000_001);
    }

    private void UpdateProbeBwCyclePhase(long nowUs, long priorBytesInFlight)
    {
        if (!FullBandwidthReached)
        {
            return;
        }

        AdaptUpperBounds(nowUs, priorBytesInFlight);
        if (!IsInProbeBwState)
        {
            return;
        }

        switch (State)
        {
            case BbrState.ProbeBwDown:
                if (CheckTimeToProbeBw(nowUs)) return;
                if (CheckTimeToCruise()) StartProbeBwCruise();
                break;
            case BbrState.ProbeBwCruise:
                CheckTimeToProbeBw(nowUs);
                break;
            case BbrState.ProbeBwRefill:
                // After one round of refilling the pipe, start probing up.
                if (_roundStart)
                {
                    _bwProbeSamples = true;
                    StartProbeBwUp(nowUs);
                }

                break;
            case BbrState.ProbeBwUp:
                if (CheckTimeToGoDown(priorBytesInFlight))
                {
                    StartProbeBwDown(nowUs);
                }

                break;
        }
    }

    /// <summary>BBRCheckTimeToGoDown: the probe is over when the delivery rate stopped growing (three rounds without
    /// 25 % more); while inflight_hi is what limits it, the growth check restarts from the current rate.</summary>
    private bool CheckTimeToGoDown(long priorBytesInFlight)
    {
        if (IsCwndLimited(priorBytesInFlight) && _cwnd >= _inflightHi)
        {
            ResetFullBw();
            _fullBw = _rsDeliveryRate;
        }
        else if (_fullBwNow)
        {
            return true;
        }

        return false;
    }

    private bool IsCwndLimited(long priorBytesInFlight) => priorBytesInFlight + 3L * MaxDatagramSize >= _cwnd;

    private bool HasElapsedInPhase(long intervalUs, long nowUs) => intervalUs != Infinite && nowUs > _cycleStampUs + intervalUs;

    private bool CheckTimeToCruise()
    {
        if (BytesInFlight > InflightWithHeadroom())
        {
            return false; // not enough headroom yet
        }

        return BytesInFlight <= Inflight(_maxBw, 1.0);
    }

    private bool CheckTimeToProbeBw(long nowUs)
    {
        if (HasElapsedInPhase(_bwProbeWaitUs, nowUs) || IsRenoCoexistenceProbeTime())
        {
            StartProbeBwRefill();
            return true;
        }

        return false;
    }

    /// <summary>Probe at least as often as Reno would refill a window of the current size (capped at 63 rounds).</summary>
    private bool IsRenoCoexistenceProbeTime()
    {
        long renoRounds = TargetInflight() / MaxDatagramSize;
        return _roundsSinceBwProbe >= Math.Min(renoRounds, 63);
    }

    private long TargetInflight() => Math.Min(Bdp(), _cwnd);

    private void AdaptUpperBounds(long nowUs, long priorBytesInFlight)
    {
        if (_ackPhase == AckPhase.ProbeStarting && _roundStart)
        {
            _ackPhase = AckPhase.ProbeFeedback; // the ACKs now reflect the probe
        }

        if (_ackPhase == AckPhase.ProbeStopping && _roundStart)
        {
            // The samples of the bandwidth probe are in: a new cycle starts a new slot of the max-bandwidth filter.
            _bwProbeSamples = false;
            _ackPhase = AckPhase.Init;
            if (IsInProbeBwState && !_rsIsAppLimited)
            {
                AdvanceMaxBwFilter();
            }
        }

        if (CheckInflightTooHigh(nowUs))
        {
            return;
        }

        if (_inflightHi == Infinite)
        {
            return;
        }

        if (_rsTxInFlight > _inflightHi)
        {
            _inflightHi = _rsTxInFlight;
        }

        if (State == BbrState.ProbeBwUp)
        {
            ProbeInflightHiUpward(priorBytesInFlight);
        }
    }

    private bool CheckInflightTooHigh(long nowUs)
    {
        if (!IsInflightTooHigh())
        {
            return false;
        }

        if (_bwProbeSamples)
        {
            HandleInflightTooHigh(_rsIsAppLimited, _rsTxInFlight, nowUs);
        }

        return true;
    }

    /// <summary>BBRIsInflightTooHigh: the sample lost more than 2 % of what was in flight when its packet was sent.</summary>
    private bool IsInflightTooHigh() => _rsLost > _rsTxInFlight * LossThreshold;

    private void HandleInflightTooHigh(bool appLimited, long txInFlight, long nowUs)
    {
        _bwProbeSamples = false;
        if (!appLimited)
        {
            _inflightHi = Math.Max(txInFlight, (long)(TargetInflight() * Beta));
        }

        if (State == BbrState.ProbeBwUp)
        {
            StartProbeBwDown(nowUs);
        }
    }

    /// <summary>BBRHandleLostPacket: while probing, a loss that takes the round over 2 % caps inflight_hi at once.</summary>
    private void HandleLostPacket(in PacketDeliveryState state, int bytes, long nowUs)
    {
        if (!_bwProbeSamples)
        {
            return;
        }

        long lost = _lost - state.Lost;
        if (lost <= state.TxInFlight * LossThreshold)
        {
            return;
        }

        // BBRInflightHiFromLostPacket: the flight size at which the loss rate crossed the threshold.
        long inflightPrev = state.TxInFlight - bytes;
        long lostPrev = lost - bytes;
        double lostPrefix = (LossThreshold * inflightPrev - lostPrev) / (1 - LossThreshold);
        long txInFlight = inflightPrev + (long)lostPrefix;
        HandleInflightTooHigh(state.IsAppLimited, txInFlight, nowUs);
    }

    private void ProbeInflightHiUpward(long priorBytesInFlight)
    {
        if (!IsCwndLimited(priorBytesInFlight) || _cwnd < _inflightHi)
        {
            return;
        }

        _bwProbeUpAcks += _rsNewlyAcked;
        if (_bwProbeUpAcks >= _bwProbeUpCount)
        {
            long delta = _bwProbeUpAcks / _bwProbeUpCount;
            _bwProbeUpAcks -= delta * _bwProbeUpCount;
            _inflightHi += delta * MaxDatagramSize;
        }

        if (_roundStart)
        {
            RaiseInflightHiSlope();
        }
    }

    /// <summary>Grow inflight_hi by 1, 2, 4... packets per round while probing up.</summary>
    private void RaiseInflightHiSlope()
    {
        long growthThisRound = (long)MaxDatagramSize << _bwProbeUpRounds;
        _bwProbeUpRounds = Math.Min(_bwProbeUpRounds + 1, 30);
        _bwProbeUpCount = Math.Max(_cwnd / growthThisRound, 1) * MaxDatagramSize;
    }

    // ---------------------------------------------------------------- ProbeRTT (draft §4.3.4)

    private void UpdateMinRtt(long nowUs)
    {
        _probeRttExpired = nowUs > _probeRttMinStampUs + ProbeRttIntervalUs;
        if (_rsRttUs >= 0 && (_rsRttUs < _probeRttMinDelayUs || _probeRttExpired))
        {
            _probeRttMinDelayUs = _rsRttUs;
            _probeRttMinStampUs = nowUs;
        }

        bool minRttExpired = nowUs > _minRttStampUs + MinRttFilterLengthUs;
        if (_probeRttMinDelayUs < _minRttUs || minRttExpired)
        {
            _minRttUs = _probeRttMinDelayUs;
            _minRttStampUs = _probeRttMinStampUs;
        }
    }

    private void CheckProbeRtt(long nowUs)
    {
        if (State != BbrState.ProbeRtt && _probeRttExpired && !_idleRestart)
        {
            EnterProbeRtt();
            _priorCwnd = SaveCwnd();
            _probeRttDoneStampUs = 0;
            _ackPhase = AckPhase.ProbeStopping;
            StartRound();
        }

        if (State == BbrState.ProbeRtt)
        {
            HandleProbeRtt(nowUs);
        }

        if (_rsDelivered > 0)
        {
            _idleRestart = false;
        }
    }

    private void EnterProbeRtt()
    {
        State = BbrState.ProbeRtt;
        _pacingGain = 1.0;
        _cwndGain = ProbeRttCwndGain;
    }

    private void HandleProbeRtt(long nowUs)
    {
        // Samples taken while the window is cut say nothing about the bandwidth.
        OnApplicationLimited(nowUs);
        if (_probeRttDoneStampUs == 0 && BytesInFlight <= ProbeRttCwnd())
        {
            _probeRttDoneStampUs = nowUs + ProbeRttDurationUs;
            _probeRttRoundDone = false;
            StartRound();
        }
        else if (_probeRttDoneStampUs != 0)
        {
            if (_roundStart)
            {
                _probeRttRoundDone = true;
            }

            if (_probeRttRoundDone)
            {
                CheckProbeRttDone(nowUs);
            }
        }
    }

    private void CheckProbeRttDone(long nowUs)
    {
        if (_probeRttDoneStampUs != 0 && nowUs > _probeRttDoneStampUs)
        {
            _probeRttMinStampUs = nowUs; // wait another ProbeRTTInterval before the next ProbeRTT
            _cwnd = Math.Max(_cwnd, _priorCwnd);
            ExitProbeRtt(nowUs);
        }
    }

    private void ExitProbeRtt(long nowUs)
    {
        ResetLowerBounds();
        if (FullBandwidthReached)
        {
            StartProbeBwDown(nowUs);
            StartProbeBwCruise();
        }
        else
        {
            EnterStartup();
        }
    }

    private long ProbeRttCwnd() => Math.Max(BdpMultiple(_bw, ProbeRttCwndGain), _minPipeCwnd);

    private void HandleRestartFromIdle(long nowUs)
    {
        if (_appLimited == 0)
        {
            return;
        }

        _idleRestart = true;
        _extraAckedIntervalStartUs = nowUs;
        if (IsInProbeBwState)
        {
            SetPacingRateWithGain(1.0);
        }
        else if (State == BbrState.ProbeRtt)
        {
            CheckProbeRttDone(nowUs);
        }
    }

    // ---------------------------------------------------------------- control parameters (draft §4.6)

    private long Bdp() => _minRttUs == Infinite ? _initialWindow : (long)(_bw * _minRttUs / 1e6);

    private long BdpMultiple(double bw, double gain) => _minRttUs == Infinite ? _initialWindow : (long)(gain * bw * _minRttUs / 1e6);

    /// <summary>BBRInflight(bw, gain): the window for a gain, with the quantization budget.</summary>
    private long Inflight(double bw, double gain) => QuantizationBudget(BdpMultiple(bw, gain));

    private long QuantizationBudget(long inflight)
    {
        long offloadBudget = 3 * _sendQuantum;
        inflight = Math.Max(inflight, offloadBudget);
        inflight = Math.Max(inflight, _minPipeCwnd);
        if (State == BbrState.ProbeBwUp)
        {
            inflight += 2L * MaxDatagramSize;
        }

        return inflight;
    }

    private long InflightWithHeadroom()
    {
        if (_inflightHi == Infinite)
        {
            return Infinite;
        }

        long headroom = Math.Max(MaxDatagramSize, (long)(Headroom * _inflightHi));
        return Math.Max(_inflightHi - headroom, _minPipeCwnd);
    }

    private void SetPacingRateWithGain(double gain)
    {
        double rate = gain * _bw * (1 - PacingMargin);
        if (rate > 0 && (FullBandwidthReached || rate > _pacingRate))
        {
            _pacingRate = rate;
        }
    }

    private void SetPacingRate() => SetPacingRateWithGain(_pacingGain);

    private void SetSendQuantum()
    {
        long quantum = (long)(_pacingRate / 1000); // 1 ms of data
        _sendQuantum = Math.Clamp(quantum, 2L * MaxDatagramSize, 64 * 1024);
    }

    private long SaveCwnd() => !_inLossRecovery && State != BbrState.ProbeRtt ? _cwnd : Math.Max(_priorCwnd, _cwnd);

    private void SetCwnd()
    {
        long inflight = BdpMultiple(_bw, _cwndGain) + _extraAcked;
        _maxInflight = QuantizationBudget(inflight);

        // BBRModulateCwndForRecovery.
        if (_rsNewlyLost > 0 && _inLossRecovery)
        {
            _cwnd = Math.Max(_cwnd - _rsNewlyLost, MaxDatagramSize);
        }

        if (_packetConservation)
        {
            _cwnd = Math.Max(_cwnd, BytesInFlight + _rsNewlyAcked);
        }
        else
        {
            if (FullBandwidthReached)
            {
                _cwnd = Math.Min(_cwnd + _rsNewlyAcked, _maxInflight);
            }
            else if (_cwnd < _maxInflight || _delivered < _initialWindow)
            {
                _cwnd += _rsNewlyAcked;
            }

            _cwnd = Math.Max(_cwnd, _minPipeCwnd);
        }

        if (State == BbrState.ProbeRtt)
        {
            _cwnd = Math.Min(_cwnd, ProbeRttCwnd());
        }

        // BBRBoundCwndForModel.
        long cap = Infinite;
        if (IsInProbeBwState && State != BbrState.ProbeBwCruise)
        {
            cap = _inflightHi;
        }
        else if (State is BbrState.ProbeRtt or BbrState.ProbeBwCruise)
        {
            cap = InflightWithHeadroom();
        }

        cap = Math.Min(cap, _inflightLo);
        cap = Math.Max(cap, _minPipeCwnd);
        _cwnd = Math.Min(_cwnd, cap);
    }

    private ulong NextRandom()
    {
        // xorshift64*: deterministic for a given seed, no allocation.
        _random ^= _random >> 12;
        _random ^= _random << 25;
        _random ^= _random >> 27;
        return _random * 0x2545F4914F6CDD1DUL;
    }
}
