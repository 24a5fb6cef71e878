namespace System.Net.Quic.Managed.Recovery;

/// <summary>NewReno as specified by RFC 9002 §7 and Appendix B.</summary>
internal sealed class NewRenoCongestionController : ICongestionController
{
    private long _bytesAckedInAvoidance;

    public NewRenoCongestionController(int maxDatagramSize)
    {
        if (maxDatagramSize < 1200)
        {
            throw new ArgumentOutOfRangeException(nameof(maxDatagramSize));
        }

        MaxDatagramSize = maxDatagramSize;
        CongestionWindow = RecoveryConstants.InitialWindow(maxDatagramSize);
    }

    public int MaxDatagramSize { get; }

    public long CongestionWindow { get; private set; }

    public long BytesInFlight { get; private set; }

    public long SlowStartThreshold { get; private set; } = long.MaxValue;

    public bool InSlowStart => CongestionWindow < SlowStartThreshold;

    public long RecoveryStartTimeUs { get; private set; } = long.MinValue;

    public long AvailableWindow => Math.Max(0, CongestionWindow - BytesInFlight);

    public bool CanSend(int bytes) => BytesInFlight + bytes <= CongestionWindow;

    public bool IsInRecovery(long timeSentUs) => timeSentUs <= RecoveryStartTimeUs;

    public void OnPacketSent(int bytes, long nowUs) => BytesInFlight += bytes;

    public void OnPacketsAcked(long ackedBytes, long largestAckedTimeSentUs, long priorBytesInFlight, long nowUs, RttEstimator rtt)
    {
        BytesInFlight = Math.Max(0, BytesInFlight - ackedBytes);
        if (!CongestionWindowLimits.IsCwndLimited(priorBytesInFlight, CongestionWindow, InSlowStart, MaxDatagramSize))
        {
            return;
        }

        // B.5: no increase during the recovery period.
        if (IsInRecovery(largestAckedTimeSentUs))
        {
            return;
        }

        if (InSlowStart)
        {
            CongestionWindow += ackedBytes;
            return;
        }

        // B.5 congestion avoidance: one max_datagram_size per congestion window acknowledged; counting acked bytes
        // keeps the remainder that a per-ACK division would truncate.
        _bytesAckedInAvoidance += ackedBytes;
        while (_bytesAckedInAvoidance >= CongestionWindow)
        {
            _bytesAckedInAvoidance -= CongestionWindow;
            CongestionWindow += MaxDatagramSize;
        }
    }

    public void OnPacketsLost(long lostBytes) => BytesInFlight = Math.Max(0, BytesInFlight - lostBytes);

    public void OnCongestionEvent(long timeSentUs, long nowUs)
    {
        // B.6: one reduction per recovery period.
        if (IsInRecovery(timeSentUs))
        {
            return;
        }

        RecoveryStartTimeUs = nowUs;
        SlowStartThreshold = CongestionWindow / 2; // kLossReductionFactor = 0.5
        CongestionWindow = Math.Max(SlowStartThreshold, RecoveryConstants.MinimumWindow(MaxDatagramSize));
        _bytesAckedInAvoidance = 0;
    }

    public void OnPersistentCongestion(long nowUs)
    {
        // B.8: minimum window; the recovery period is reset so growth resumes at once.
        CongestionWindow = RecoveryConstants.MinimumWindow(MaxDatagramSize);
        RecoveryStartTimeUs = long.MinValue;
        _bytesAckedInAvoidance = 0;
    }

    public void OnPacketsDiscarded(long bytes) => BytesInFlight = Math.Max(0, BytesInFlight - bytes);

    public void OnNewPath()
    {
        CongestionWindow = RecoveryConstants.InitialWindow(MaxDatagramSize);
        SlowStartThreshold = long.MaxValue;
        RecoveryStartTimeUs = long.MinValue;
        _bytesAckedInAvoidance = 0;
    }
}
