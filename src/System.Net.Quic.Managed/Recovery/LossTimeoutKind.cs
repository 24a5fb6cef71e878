namespace System.Net.Quic.Managed.Recovery;

/// <summary>What the connection must do after the loss detection timer fired. RFC 9002 A.9 OnLossDetectionTimeout.</summary>
internal enum LossTimeoutKind : byte
{
    /// <summary>The timer was not due (or not armed): nothing to do.</summary>
    None = 0,

    /// <summary>Packets were declared lost by time threshold and reported to the sink; requeue their frames.</summary>
    LossDetected = 1,

    /// <summary>PTO: send one or two ack-eliciting packets in the given space (new data, else retransmitted data,
    /// else PING), exempt from the congestion window. RFC 9002 §6.2.4.</summary>
    Probe = 2,

    /// <summary>Client anti-deadlock PTO: send one ack-eliciting packet: a padded Initial, or a Handshake packet if
    /// Handshake keys exist. RFC 9002 §6.2.2.1.</summary>
    AntiDeadlockProbe = 3,
}
