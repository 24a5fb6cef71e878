namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The end of a connection (RFC 9000 §10.2). Closing: we sent CONNECTION_CLOSE and answer further
/// packets with it again, rate-limited. Draining: the peer closed; we send nothing. Either lasts
/// three PTOs, then the state is discarded.
/// </summary>
internal struct CloseState
{
    private long _endUs;
    private int _packetsSinceLastClose;
    private int _closeEvery;
    private long _nextResendUs;
    private long _resendIntervalUs;

    public ConnectionPhase Phase { get; private set; }

    /// <summary>When the closing or draining period ends (long.MaxValue while open).</summary>
    public readonly long DeadlineUs => Phase is ConnectionPhase.Closing or ConnectionPhase.Draining ? _endUs : long.MaxValue;

    /// <summary>We initiated the close (or hit an error): enter the closing period.</summary>
    public void EnterClosing(long nowUs, long ptoUs)
    {
        if (Phase != ConnectionPhase.Open) return;
        Phase = ConnectionPhase.Closing;
        _endUs = nowUs + 3 * ptoUs;
        _packetsSinceLastClose = 0;
        _closeEvery = 1;
        _resendIntervalUs = Math.Max(1, ptoUs);
        _nextResendUs = nowUs + _resendIntervalUs;
    }

    /// <summary>
    /// When CONNECTION_CLOSE goes again unprompted (long.MaxValue: no more): once per PTO within the closing period.
    /// RFC 9000 §10.2.1 only requires answering incoming packets; a peer with nothing in flight sends none, so without
    /// this one lost close would leave it waiting for its idle timeout. Two more copies, one PTO apart, bound the cost.
    /// </summary>
    public readonly long NextResendUs => Phase == ConnectionPhase.Closing ? _nextResendUs : long.MaxValue;

    /// <summary>The unprompted resend is due: returns true (send CONNECTION_CLOSE now) and schedules the next one.</summary>
    public bool OnResendTimer(long nowUs)
    {
        if (Phase != ConnectionPhase.Closing || nowUs < _nextResendUs) return false;
        _nextResendUs = nowUs + _resendIntervalUs;
        if (_nextResendUs >= _endUs) _nextResendUs = long.MaxValue;
        return true;
    }

    /// <summary>The peer closed (or a stateless reset arrived): enter the draining period (§10.2.2).</summary>
    public void EnterDraining(long nowUs, long ptoUs)
    {
        if (Phase is ConnectionPhase.Draining or ConnectionPhase.Closed) return;
        long end = nowUs + 3 * ptoUs;
        // A closing endpoint that receives CONNECTION_CLOSE may go to draining; it keeps its original deadline.
        _endUs = Phase == ConnectionPhase.Closing ? Math.Min(_endUs, end) : end;
        Phase = ConnectionPhase.Draining;
    }

    /// <summary>
    /// A packet arrived while closing. Returns true when CONNECTION_CLOSE should be sent again: we back off
    /// exponentially in packets received (§10.2.1 asks for a limit on the rate of these).
    /// </summary>
    public bool ShouldResendClose()
    {
        if (Phase != ConnectionPhase.Closing) return false;
        if (++_packetsSinceLastClose < _closeEvery) return false;
        _packetsSinceLastClose = 0;
        _closeEvery = Math.Min(_closeEvery * 2, 256);
        return true;
    }

    /// <summary>Ends the period when its deadline passed; returns true when the connection is now Closed.</summary>
    public bool OnTimeout(long nowUs)
    {
        if (Phase is not (ConnectionPhase.Closing or ConnectionPhase.Draining) || nowUs < _endUs) return false;
        Phase = ConnectionPhase.Closed;
        return true;
    }

    /// <summary>Immediate close without a closing period (idle timeout, §10.1: the connection is silently closed).</summary>
    public void CloseSilently() => Phase = ConnectionPhase.Closed;
}
