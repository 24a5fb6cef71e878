namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// The connection's delivery state when a packet was sent, kept with the packet for a rate-sampling congestion
/// controller (draft-ietf-ccwg-bbr §4.5.2 "Delivery Rate" per-packet state: P.delivered, P.delivered_time,
/// P.first_sent_time, P.is_app_limited, P.tx_in_flight, P.lost). All zero for controllers that do not sample.
/// </summary>
internal struct PacketDeliveryState
{
    /// <summary>C.delivered (bytes) when the packet was sent.</summary>
    public long Delivered;

    /// <summary>C.delivered_time (us) when the packet was sent.</summary>
    public long DeliveredTimeUs;

    /// <summary>C.first_sent_time (us): send time of the first packet of the current sending flight.</summary>
    public long FirstSentTimeUs;

    /// <summary>Bytes in flight just after the packet was sent (P.tx_in_flight).</summary>
    public long TxInFlight;

    /// <summary>C.lost (bytes) when the packet was sent.</summary>
    public long Lost;

    /// <summary>The sender was application limited when the packet was sent.</summary>
    public bool IsAppLimited;
}
