namespace System.Net.Quic.Managed.Recovery;

/// <summary>RTT estimation. RFC 9002 §5 and Appendix A.7. All values in microseconds.</summary>
internal sealed class RttEstimator
{
    private readonly long _initialRttUs;

    public RttEstimator(long initialRttUs = RecoveryConstants.InitialRttUs)
    {
        if (initialRttUs <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(initialRttUs));
        }

        _initialRttUs = initialRttUs;
        Reset();
    }

    public long LatestRttUs { get; private set; }

    public long MinRttUs { get; private set; }

    public long SmoothedRttUs { get; private set; }

    public long RttVarUs { get; private set; }

    /// <summary>True once the first RTT sample was taken.</summary>
    public bool HasSample { get; private set; }

    /// <summary>Time of the first RTT sample (first_rtt_sample); meaningful only when <see cref="HasSample"/>.</summary>
    public long FirstSampleTimeUs { get; private set; }

    /// <summary>smoothed_rtt + max(4 * rttvar, kGranularity): the PTO base without max_ack_delay. RFC 9002 §6.2.1.</summary>
    public long PtoBaseUs => SmoothedRttUs + Math.Max(4 * RttVarUs, RecoveryConstants.GranularityUs);

    /// <summary>Time-threshold loss delay: max(9/8 * max(srtt, latest_rtt), kGranularity). RFC 9002 §6.1.2.</summary>
    public long LossDelayUs
    {
        get
        {
            long rtt = Math.Max(SmoothedRttUs, LatestRttUs);
            return Math.Max(rtt * RecoveryConstants.TimeThresholdNumerator / RecoveryConstants.TimeThresholdDenominator, RecoveryConstants.GranularityUs);
        }
    }

    /// <summary>Back to the pre-sample state: smoothed_rtt = kInitialRtt, rttvar = kInitialRtt / 2. RFC 9002 §5.3, §6.2.2.</summary>
    public void Reset()
    {
        LatestRttUs = 0;
        MinRttUs = 0;
        SmoothedRttUs = _initialRttUs;
        RttVarUs = _initialRttUs / 2;
        HasSample = false;
        FirstSampleTimeUs = 0;
    }

    /// <summary>RFC 9002 §5.2: after persistent congestion min_rtt restarts from the newest sample, so a path whose RTT
    /// grew does not keep declaring persistent congestion.</summary>
    public void OnPersistentCongestion()
    {
        if (HasSample)
        {
            MinRttUs = LatestRttUs;
        }
    }

    /// <summary>
    /// Takes one RTT sample. RFC 9002 §5.1-§5.3.
    /// </summary>
    /// <param name="latestRttUs">now - time the largest newly acknowledged packet was sent.</param>
    /// <param name="ackDelayUs">The peer's decoded ACK Delay (already scaled by ack_delay_exponent); pass 0 for
    /// Initial-space ACKs, which the peer does not delay (§5.3 allows ignoring it).</param>
    /// <param name="handshakeConfirmed">After confirmation ack_delay is capped at max_ack_delay (§5.3); before, the
    /// peer's max_ack_delay is not yet trusted and the reported delay is used as is.</param>
    /// <param name="maxAckDelayUs">The peer's max_ack_delay transport parameter.</param>
    /// <param name="nowUs">Current time (recorded as first_rtt_sample on the first call).</param>
    public void OnSample(long latestRttUs, long ackDelayUs, bool handshakeConfirmed, long maxAckDelayUs, long nowUs)
    {
        // A clock that goes backwards or a zero-time loopback must not poison the estimator; §5.1 requires > 0 in spirit.
        if (latestRttUs < 1)
        {
            latestRttUs = 1;
        }

        if (ackDelayUs < 0)
        {
            ackDelayUs = 0;
        }

        LatestRttUs = latestRttUs;
        if (!HasSample)
        {
            // §5.3: the first sample initializes everything and ignores ack_delay.
            HasSample = true;
            FirstSampleTimeUs = nowUs;
            MinRttUs = latestRttUs;
            SmoothedRttUs = latestRttUs;
            RttVarUs = latestRttUs / 2;
            return;
        }

        // §5.2: min_rtt uses the raw sample, never adjusted for ack delay.
        MinRttUs = Math.Min(MinRttUs, latestRttUs);

        if (handshakeConfirmed)
        {
            ackDelayUs = Math.Min(ackDelayUs, maxAckDelayUs);
        }

        // §5.3: never let the ack-delay adjustment take the sample below min_rtt.
        long adjustedRtt = latestRttUs;
        if (latestRttUs >= MinRttUs + ackDelayUs)
        {
            adjustedRtt = latestRttUs - ackDelayUs;
        }

        // §5.3 / A.7: rttvar uses the previous smoothed_rtt.
        long rttVarSample = Math.Abs(SmoothedRttUs - adjustedRtt);
        RttVarUs = (3 * RttVarUs + rttVarSample) / 4;
        SmoothedRttUs = (7 * SmoothedRttUs + adjustedRtt) / 8;
    }
}
