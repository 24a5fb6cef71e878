namespace QuicManaged.Tools.LinkEmulator;

/// <summary>Counters of one link direction, reported on exit, on SIGUSR1 and in the periodic stats JSON.</summary>
internal sealed class DirectionCounters
{
    public long PacketsIn;
    public long BytesIn;
    public long PacketsForwarded;
    public long BytesForwarded;
    public long DroppedLoss;
    public long DroppedBurstLoss;
    public long DroppedQueueFull;
    public long DroppedWriteError;
    /// <summary>Scheduled packets whose release time was later than their arrival.</summary>
    public long Delayed;
    /// <summary>Packets held back by the reorder impairment.</summary>
    public long Reordered;
    /// <summary>Sum over forwarded packets of (release - arrival), to report the mean added delay.</summary>
    public long DelaySumUs;
    public long MaxQueueBytes;
    /// <summary>Sum and maximum over forwarded packets of (time actually released - scheduled release): how late the
    /// relay loop was (CPU starvation, poll resolution). Zero in an ideal run.</summary>
    public long LatenessSumUs;
    public long MaxLatenessUs;

    public long DroppedTotal => DroppedLoss + DroppedBurstLoss + DroppedQueueFull + DroppedWriteError;

    public double MeanDelayUs => PacketsForwarded == 0 ? 0 : (double)DelaySumUs / PacketsForwarded;

    public double MeanLatenessUs => PacketsForwarded == 0 ? 0 : (double)LatenessSumUs / PacketsForwarded;
}
