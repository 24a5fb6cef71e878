namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Counters of one link direction.</summary>
internal sealed class LinkStatistics
{
    private readonly long[] _droppedByCause = new long[(int)DropCause.NoEndpoint + 1];

    public long SentDatagrams { get; internal set; }

    public long SentBytes { get; internal set; }

    /// <summary>Datagrams handed to the destination endpoint, copies (duplicates, replays) included.</summary>
    public long DeliveredDatagrams { get; internal set; }

    public long DeliveredBytes { get; internal set; }

    public long DroppedDatagrams { get; internal set; }

    /// <summary>Extra copies scheduled by <see cref="LinkConditions.DuplicationProbability"/>.</summary>
    public long Duplicated { get; internal set; }

    /// <summary>Extra copies scheduled by <see cref="InterceptAction.Replay"/>.</summary>
    public long Replayed { get; internal set; }

    public long Corrupted { get; internal set; }

    /// <summary>Datagrams held back by <see cref="LinkConditions.ReorderProbability"/>.</summary>
    public long Reordered { get; internal set; }

    /// <summary>Original (non-copy) datagrams delivered after one sent later on this direction: reordering as observed.</summary>
    public long DeliveredOutOfOrder { get; internal set; }

    public long Dropped(DropCause cause) => _droppedByCause[(int)cause];

    internal void CountDrop(DropCause cause)
    {
        DroppedDatagrams++;
        _droppedByCause[(int)cause]++;
    }

    public override string ToString()
        => $"sent {SentDatagrams} ({SentBytes} B), delivered {DeliveredDatagrams} ({DeliveredBytes} B), dropped {DroppedDatagrams} "
            + $"[interceptor {Dropped(DropCause.Interceptor)}, too large {Dropped(DropCause.TooLarge)}, queue {Dropped(DropCause.QueueOverflow)}, "
            + $"random {Dropped(DropCause.RandomLoss)}, burst {Dropped(DropCause.BurstLoss)}, no endpoint {Dropped(DropCause.NoEndpoint)}], "
            + $"duplicated {Duplicated}, replayed {Replayed}, corrupted {Corrupted}, reordered {Reordered}, out of order {DeliveredOutOfOrder}";
}
