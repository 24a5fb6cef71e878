namespace QuicManaged.Tools.LinkEmulator;

/// <summary>What the impairment core decided for one submitted packet.</summary>
internal enum PacketFate
{
    Scheduled,
    DroppedLoss,
    DroppedBurstLoss,
    DroppedQueueFull,
    DroppedEmpty,
}
