namespace System.Net.Quic.Managed.Recovery;

/// <summary>
/// Receives packets as they are acknowledged or declared lost. Implement it on a struct and pass it by ref
/// so the generic call is specialized and nothing is boxed. Callbacks run while the tracker is iterating: they must
/// not call back into the tracker or <see cref="RecoveryController{TMeta}"/> (record what to do, act afterwards).
/// </summary>
internal interface ISentPacketSink<TMeta> where TMeta : struct
{
    void OnPacketAcked(PacketNumberSpace space, in SentPacket<TMeta> packet);

    /// <summary>The core should requeue the frames recorded in <c>packet.Meta</c>. RFC 9000 §13.3.</summary>
    void OnPacketLost(PacketNumberSpace space, in SentPacket<TMeta> packet);
}
