namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// What loss recovery remembers about one sent packet. RFC 9002 Appendix A.1.1.
/// <typeparamref name="TMeta"/> is the connection core's record of the frames the packet carried.
/// </summary>
internal struct SentPacket<TMeta> where TMeta : struct
{
    public long PacketNumber;
    public long TimeSentUs;
    public int Size;
    public bool AckEliciting;
    public bool InFlight;
    public SentPacketState State;

    /// <summary>Sent in a datagram marked ECT(0) (RFC 9000 §13.4.2: ECN validation counts these).</summary>
    public bool EcnMarked;

    /// <summary>A path MTU probe (RFC 9000 §14.4): its loss is no congestion signal.</summary>
    public bool PathProbe;
    public TMeta Meta;

    /// <summary>Delivery-rate state for a rate-sampling controller (<see cref="IRateSamplingCongestionController"/>); default otherwise.</summary>
    public PacketDeliveryState Delivery;
}
