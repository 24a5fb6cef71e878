namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The kinds of timer a connection runs, in the order <see cref="Connection.OnTimeout"/> handles those that are due
/// (the close timers first; then the ones that end the connection; then those that only set something to send).
/// </summary>
internal enum TimerKind
{
    /// <summary>End of the closing or draining period (RFC 9000 §10.2).</summary>
    Close,

    /// <summary>Repeat of CONNECTION_CLOSE while closing (§10.2.1).</summary>
    CloseResend,

    /// <summary>Idle timeout (§10.1).</summary>
    Idle,

    /// <summary>The handshake's own time limit.</summary>
    Handshake,

    /// <summary>The pacer allows the next packet (RFC 9002 §7.7).</summary>
    Pacing,

    /// <summary>Path validation gives up (RFC 9000 §8.2.4).</summary>
    PathValidation,

    /// <summary>A PING keeps the connection alive (§10.1.2).</summary>
    KeepAlive,

    /// <summary>Loss detection or probe timeout (RFC 9002 §6).</summary>
    LossDetection,

    /// <summary>An ACK is due in the Initial space (RFC 9000 §13.2.1).</summary>
    AckInitial,

    /// <summary>An ACK is due in the Handshake space.</summary>
    AckHandshake,

    /// <summary>An ACK is due in the application data space.</summary>
    AckApplication,

    /// <summary>A client with 0-RTT stops holding its first flight for early data (see EarlyDataFirstFlightHoldUs).</summary>
    FirstFlightHold,

    /// <summary>
    /// MAX_STREAMS that the peer does not need yet (it has at least half its limit left) was held back to ride with a
    /// later packet; it goes on its own at the latest max_ack_delay after it was first held.
    /// </summary>
    MaxStreamsHold,

    /// <summary>The number of kinds (not a timer).</summary>
    Count,
}
