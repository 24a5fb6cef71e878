using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Recovery;

/// <summary>Outcome of applying one ACK frame to a <see cref="SentPacketTracker{TMeta}"/>.</summary>
internal struct AckProcessingResult
{
    /// <summary>NoError, or the code the connection must close with (ProtocolViolation for an ACK of a packet
    /// never sent, RFC 9000 §13.1; FrameEncodingError for malformed ranges).</summary>
    public TransportErrorCode Error;

    /// <summary>Static reason text for the CONNECTION_CLOSE frame; null when <see cref="Error"/> is NoError.</summary>
    public string? Reason;

    public int NewlyAckedCount;

    /// <summary>Sum of the sizes of newly acknowledged in-flight packets (to remove from bytes_in_flight).</summary>
    public long NewlyAckedInFlightBytes;

    /// <summary>At least one newly acknowledged packet was ack-eliciting.</summary>
    public bool NewlyAckedAckEliciting;

    /// <summary>-1 when nothing was newly acknowledged.</summary>
    public long LargestNewlyAckedPacketNumber;

    public long LargestNewlyAckedTimeSentUs;

    /// <summary>The frame's Largest Acknowledged was newly acknowledged by this frame.</summary>
    public bool LargestAckedIsNewlyAcked;

    /// <summary>RFC 9002 §5.1: take an RTT sample from this ACK.</summary>
    public readonly bool ShouldSampleRtt => LargestAckedIsNewlyAcked && NewlyAckedAckEliciting;

    public readonly bool IsError => Error != TransportErrorCode.NoError;
}
