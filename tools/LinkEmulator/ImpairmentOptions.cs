namespace QuicManaged.Tools.LinkEmulator;

/// <summary>Impairments applied to one direction of the emulated link. Times in microseconds, rates in bits per second.</summary>
internal sealed class ImpairmentOptions
{
    /// <summary>Fixed one-way propagation delay added to every forwarded packet.</summary>
    public long DelayUs { get; set; }

    /// <summary>Half-width of a uniform jitter added to the delay ([-JitterUs, +JitterUs], total delay clamped at 0).
    /// Jitter alone never reorders: a packet is never released before the one that arrived ahead of it.</summary>
    public long JitterUs { get; set; }

    /// <summary>Independent (Bernoulli) loss probability per packet; used when Gilbert-Elliott is off.</summary>
    public double LossProbability { get; set; }

    /// <summary>Gilbert-Elliott burst loss: probability of moving Good→Bad per packet; 0 disables the model.</summary>
    public double BurstGoodToBad { get; set; }

    /// <summary>Gilbert-Elliott: probability of moving Bad→Good per packet.</summary>
    public double BurstBadToGood { get; set; } = 1.0;

    /// <summary>Gilbert-Elliott: loss probability while in the Bad state.</summary>
    public double BurstLossInBad { get; set; } = 1.0;

    /// <summary>Gilbert-Elliott: loss probability while in the Good state.</summary>
    public double BurstLossInGood { get; set; }

    /// <summary>Probability that a packet is held back by <see cref="ReorderGapUs"/> so later packets overtake it.</summary>
    public double ReorderProbability { get; set; }

    /// <summary>Extra hold for a reordered packet.</summary>
    public long ReorderGapUs { get; set; } = 1000;

    /// <summary>Bottleneck rate; 0 means unlimited (no serialization delay, no queue).</summary>
    public long RateBitsPerSecond { get; set; }

    /// <summary>Drop-tail limit on bytes waiting for serialization at the bottleneck (only with a rate).</summary>
    public long QueueLimitBytes { get; set; } = 256 * 1024;

    public bool BurstLossEnabled => BurstGoodToBad > 0;

    public ImpairmentOptions Clone() => (ImpairmentOptions)MemberwiseClone();
}
