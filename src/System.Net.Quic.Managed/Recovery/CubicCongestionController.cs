namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// CUBIC, RFC 9438, on top of the RFC 9002 window bookkeeping (slow start, recovery period, persistent congestion).
/// Window arithmetic is done in segments (units of max_datagram_size) as in the RFC's formulas; t is seconds.
/// </summary>
internal sealed class CubicCongestionController : ICongestionController
{
    /// <summary>C. RFC 9438 §5.1.</summary>
    public const double C = 0.4;

    /// <summary>beta_cubic. RFC 9438 §4.6.</summary>
    public const double Beta = 0.7;

    /// <summary>alpha_cubic = 3 * (1 - beta) / (1 + beta). RFC 9438 §4.3.</summary>
    public const double RenoFriendlyAlpha = 3.0 * (1.0 - Beta) / (1.0 + Beta);

    private readonly long _minimumWindow;

    // Window in bytes, fractional so that per-ACK increments smaller than a byte accumulate.
    private double _cwnd;

    // W_max, K, cwnd_prior, W_est (segments) and t_epoch (us; long.MinValue = no congestion avoidance epoch yet).
    private double _wMax;
    private double _k;
    private double _cwndPrior;
    private double _wEst;
    private long _epochStartUs = long.MinValue;
    private long _lastAckUs = long.MinValue;

    public CubicCongestionController(int maxDatagramSize)
    {
        if (maxDatagramSize < 1200)
        {
            throw new ArgumentOutOfRangeException(nameof(maxDatagramSize));
        }

        MaxDatagramSize = maxDatagramSize;
        _cwnd = RecoveryConstants.InitialWindow(maxDatagramSize);
        _minimumWindow = RecoveryConstants.MinimumWindow(maxDatagramSize);
    }

    public int MaxDatagramSize { get; }

    public long CongestionWindow => (long)_cwnd;

    public long BytesInFlight { get; private set; }

    public long SlowStartThreshold { get; private set; } = long.MaxValue;

    public bool InSlowStart => CongestionWindow < SlowStartThreshold;

    public long RecoveryStartTimeUs { get; private set; } = long.MinValue;

    public long AvailableWindow => Math.Max(0, CongestionWindow - BytesInFlight);

    /// <summary>W_max in segments (0 before the first congestion event). For tests and diagnostics.</summary>
    internal double WMaxSegments => _wMax;

    /// <summary>K in seconds for the current epoch. For tests and diagnostics.</summary>
    internal double KSeconds => _k;

    /// <summary>W_est in segments. For tests and diagnostics.</summary>
    internal double RenoEstimateSegments => _wEst;

    /// <summary>t_epoch, long.MinValue when no congestion avoidance epoch is running.</summary>
    internal long EpochStartUs => _epochStartUs;

    public bool CanSend(int bytes) => BytesInFlight + bytes <= CongestionWindow;

    public bool IsInRecovery(long timeSentUs) => timeSentUs <= RecoveryStartTimeUs;

    /// <summary>W_cubic(t) = C * (t - K)^3 + W_max, segments. RFC 9438 §4.2 Figure 1.</summary>
    internal static double WCubic(double tSeconds, double kSeconds, double wMaxSegments)
    {
        double d = tSeconds - kSeconds;
        return C * d * d * d + wMaxSegments;
    }

    /// <summary>K = cbrt((W_max - cwnd_epoch) / C). RFC 9438 §4.2 Figure 2.</summary>
    internal static double ComputeK(double wMaxSegments, double cwndEpochSegments)
        => wMaxSegments > cwndEpochSegments ? Math.Cbrt((wMaxSegments - cwndEpochSegments) / C) : 0;

    public void OnPacketSent(int bytes, long nowUs)
    {
        // RFC 9438 §5.8: time spent idle (nothing in flight) must not count as congestion-avoidance time, or the
        // window would jump on the first ACK after the pause.
        if (BytesInFlight == 0 && _epochStartUs != long.MinValue && _lastAckUs != long.MinValue && nowUs > _lastAckUs)
        {
            _epochStartUs += nowUs - _lastAckUs;
            _lastAckUs = nowUs;
        }

        BytesInFlight += bytes;
    }

    public void OnPacketsAcked(long ackedBytes, long largestAckedTimeSentUs, long priorBytesInFlight, long nowUs, RttEstimator rtt)
    {
        BytesInFlight = Math.Max(0, BytesInFlight - ackedBytes);
        _lastAckUs = nowUs;
        if (ackedBytes <= 0 || IsInRecovery(largestAckedTimeSentUs))
        {
            return;
        }

        if (!CongestionWindowLimits.IsCwndLimited(priorBytesInFlight, CongestionWindow, InSlowStart, MaxDatagramSize))
        {
            return;
        }

        if (InSlowStart)
        {
            // RFC 9438 §4.10: standard slow start.
            _cwnd += ackedBytes;
            return;
        }

        double mds = MaxDatagramSize;
        double cwndSegments = _cwnd / mds;
        if (_epochStartUs == long.MinValue)
        {
            // Start of a congestion avoidance stage. Without a prior W_max (slow start ended without loss, or after
            // persistent congestion), RFC 9438 §4.8/§4.10: W_max = cwnd, K = 0.
            _epochStartUs = nowUs;
            if (_wMax <= 0)
            {
                _wMax = cwndSegments;
                _cwndPrior = cwndSegments;
            }

            _k = ComputeK(_wMax, cwndSegments);
            _wEst = cwndSegments;
        }

        double t = (nowUs - _epochStartUs) / 1e6;
        double rttSeconds = rtt.SmoothedRttUs / 1e6;
        double segmentsAcked = ackedBytes / mds;

        // RFC 9438 §4.3: Reno-friendly estimate; alpha becomes 1 once W_est reaches cwnd_prior.
        double alpha = _wEst >= _cwndPrior ? 1.0 : RenoFriendlyAlpha;
        _wEst += alpha * segmentsAcked / cwndSegments;

        if (WCubic(t, _k, _wMax) < _wEst)
        {
            // Reno-friendly region: cwnd = W_est.
            _cwnd = Math.Max(_cwnd, _wEst * mds);
            return;
        }

        // RFC 9438 §4.4/§4.5: concave and convex regions chase W_cubic(t + RTT), the target clamped to [cwnd, 1.5 cwnd].
        double target = WCubic(t + rttSeconds, _k, _wMax);
        target = Math.Clamp(target, cwndSegments, 1.5 * cwndSegments);
        _cwnd += (target - cwndSegments) / cwndSegments * segmentsAcked * mds;
    }

    public void OnPacketsLost(long lostBytes) => BytesInFlight = Math.Max(0, BytesInFlight - lostBytes);

    public void OnCongestionEvent(long timeSentUs, long nowUs)
    {
        if (IsInRecovery(timeSentUs))
        {
            return;
        }

        RecoveryStartTimeUs = nowUs;
        double cwndSegments = _cwnd / MaxDatagramSize;

        // RFC 9438 §4.7 fast convergence: a window that shrank since the last event releases bandwidth to newer flows.
        _wMax = cwndSegments < _wMax ? cwndSegments * (1.0 + Beta) / 2.0 : cwndSegments;
        _cwndPrior = cwndSegments;

        // RFC 9438 §4.6 multiplicative decrease.
        double reduced = Math.Max(_cwnd * Beta, _minimumWindow);
        SlowStartThreshold = (long)reduced;
        _cwnd = reduced;
        _epochStartUs = long.MinValue;
        _k = ComputeK(_wMax, reduced / MaxDatagramSize);
    }

    public void OnPersistentCongestion(long nowUs)
    {
        // RFC 9002 §7.6.2 minimum window; RFC 9438 §4.8: the next congestion avoidance stage starts with K = 0 and
        // W_max = the window at its start.
        _cwnd = _minimumWindow;
        RecoveryStartTimeUs = long.MinValue;
        _epochStartUs = long.MinValue;
        _wMax = 0;
        _k = 0;
    }

    public void OnPacketsDiscarded(long bytes) => BytesInFlight = Math.Max(0, BytesInFlight - bytes);

    public void OnNewPath()
    {
        _cwnd = RecoveryConstants.InitialWindow(MaxDatagramSize);
        SlowStartThreshold = long.MaxValue;
        RecoveryStartTimeUs = long.MinValue;
        _wMax = 0;
        _k = 0;
        _cwndPrior = 0;
        _wEst = 0;
        _epochStartUs = long.MinValue;
        _lastAckUs = long.MinValue;
    }
}
