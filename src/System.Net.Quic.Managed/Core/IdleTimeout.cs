namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The idle timer of RFC 9000 §10.1: the effective timeout is the smaller of the two advertised
/// max_idle_timeout values (0 means "none"), never below three PTOs; it restarts on every packet
/// received and processed, and on the first ack-eliciting packet sent after a receipt.
/// </summary>
internal struct IdleTimeout
{
    private readonly long _localUs;
    private long _effectiveUs;
    private long _lastActivityUs;
    private bool _sentAckElicitingSinceReceive;

    /// <param name="localTimeoutUs">Our max_idle_timeout in microseconds; 0 disables it.</param>
    /// <param name="nowUs">Now; the timer starts running from here.</param>
    public IdleTimeout(long localTimeoutUs, long nowUs)
    {
        if (localTimeoutUs < 0) throw new ArgumentOutOfRangeException(nameof(localTimeoutUs));
        _localUs = localTimeoutUs;
        _effectiveUs = localTimeoutUs;
        _lastActivityUs = nowUs;
        _sentAckElicitingSinceReceive = false;
    }

    /// <summary>The negotiated timeout in microseconds before the three-PTO floor; 0 when neither side sets one.</summary>
    public readonly long EffectiveTimeoutUs => _effectiveUs;

    /// <summary>Applies the peer's max_idle_timeout (in microseconds) once its transport parameters arrive.</summary>
    public void OnPeerTimeout(long peerTimeoutUs)
    {
        if (peerTimeoutUs <= 0) _effectiveUs = _localUs;
        else if (_localUs <= 0) _effectiveUs = peerTimeoutUs;
        else _effectiveUs = Math.Min(_localUs, peerTimeoutUs);
    }

    public void OnPacketReceived(long nowUs)
    {
        _lastActivityUs = nowUs;
        _sentAckElicitingSinceReceive = false;
    }

    public void OnAckElicitingPacketSent(long nowUs)
    {
        if (_sentAckElicitingSinceReceive) return;
        _sentAckElicitingSinceReceive = true;
        _lastActivityUs = nowUs;
    }

    /// <summary>When the connection dies of idleness, or long.MaxValue without a timeout.</summary>
    public readonly long DeadlineUs(long ptoUs)
    {
        if (_effectiveUs <= 0) return long.MaxValue;
        return _lastActivityUs + Math.Max(_effectiveUs, 3 * ptoUs);
    }

    /// <summary>The last time the timer was restarted, for keep-alive scheduling.</summary>
    public readonly long LastActivityUs => _lastActivityUs;
}
