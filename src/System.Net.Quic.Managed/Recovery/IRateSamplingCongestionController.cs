namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Optional extension of <see cref="ICongestionController"/> for a controller that models the path from per-packet
/// delivery-rate samples (BBR). <see cref="RecoveryController{TMeta}"/> stamps each in-flight packet with
/// <see cref="OnSending"/> and reports each in-flight packet acknowledged or lost, one by one, before the aggregate
/// <see cref="ICongestionController.OnPacketsAcked"/> / <see cref="ICongestionController.OnPacketsLost"/> calls.
/// Controllers that do not implement it (NewReno, CUBIC) see exactly the calls they always saw.
/// </summary>
internal interface IRateSamplingCongestionController : ICongestionController
{
    /// <summary>An in-flight packet of <paramref name="bytes"/> is about to be sent (before <see cref="ICongestionController.OnPacketSent"/>):
    /// returns the delivery state to keep with it.</summary>
    PacketDeliveryState OnSending(int bytes, long nowUs);

    /// <summary>An in-flight packet was newly acknowledged (draft-ietf-ccwg-bbr UpdateRateSample).</summary>
    void OnPacketDelivered(in PacketDeliveryState state, int bytes, long timeSentUs, long nowUs);

    /// <summary>An in-flight packet was declared lost (draft-ietf-ccwg-bbr BBRHandleLostPacket).</summary>
    void OnPacketLost(in PacketDeliveryState state, long packetNumber, int bytes, long nowUs);

    /// <summary>The sender had nothing to send although the window and the pacer allowed it (C.app_limited).</summary>
    void OnApplicationLimited(long nowUs);

    /// <summary>The rate the pacer should send at, bytes per second.</summary>
    long PacingRateBytesPerSecond { get; }
}
