namespace System.Net.Quic.Managed.Recovery;

/// <summary>Result of <see cref="RecoveryController{TMeta}.OnLossDetectionTimeout"/>.</summary>
internal readonly record struct LossTimeoutAction(LossTimeoutKind Kind, PacketNumberSpace Space, int ProbePackets, int LostCount);
