namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Impairments of one direction of a <see cref="SimulatedLink"/>. Mutable: a test may change them mid-run
/// (they apply to datagrams sent afterwards). All randomness comes from the network's single seeded Random.
/// </summary>
internal sealed class LinkConditions
{
    /// <summary>Fixed one-way propagation delay.</summary>
    public long DelayUs { get; set; }

    /// <summary>Extra delay drawn uniformly from [0, JitterUs] per datagram.</summary>
    public long JitterUs { get; set; }

    /// <summary>When false (default) jitter never lets a datagram overtake an earlier one (FIFO, like a real path).</summary>
    public bool AllowJitterReordering { get; set; }

    /// <summary>Bottleneck rate; each datagram occupies the link for ceil(bits / rate) µs. 0 = unlimited.</summary>
    public long BandwidthBitsPerSecond { get; set; }

    /// <summary>
    /// Drop-tail buffer before the bottleneck: bytes not yet fully serialized (including the one on the wire).
    /// Only meaningful with a bandwidth limit.
    /// </summary>
    public long QueueLimitBytes { get; set; } = long.MaxValue;

    /// <summary>Datagrams longer than this are dropped (<see cref="DropCause.TooLarge"/>), like a path MTU.</summary>
    public int MaxDatagramSize { get; set; } = int.MaxValue;

    /// <summary>Independent (Bernoulli) loss probability per datagram.</summary>
    public double LossProbability { get; set; }

    /// <summary>Optional burst-loss model, applied in addition to <see cref="LossProbability"/>.</summary>
    public GilbertElliottLoss? BurstLoss { get; set; }

    /// <summary>Probability that a datagram is held back by <see cref="ReorderExtraDelayUs"/>, letting later ones pass it.</summary>
    public double ReorderProbability { get; set; }

    public long ReorderExtraDelayUs { get; set; }

    /// <summary>Probability that a second (uncorrupted) copy is delivered <see cref="DuplicateExtraDelayUs"/> after the original.</summary>
    public double DuplicationProbability { get; set; }

    public long DuplicateExtraDelayUs { get; set; }

    /// <summary>Probability that exactly one uniformly chosen bit of the datagram is flipped.</summary>
    public double CorruptionProbability { get; set; }

    /// <summary>ECN bleaching: every datagram arrives Not-ECT, whatever it was sent with.</summary>
    public bool BleachEcn { get; set; }

    /// <summary>ECN remarking: ECT datagrams arrive with this codepoint instead (null: unchanged).</summary>
    public byte? RemarkEcnTo { get; set; }

    /// <summary>Probability that an ECT datagram is marked CE (an AQM signalling congestion). Draws only when above 0.</summary>
    public double CeMarkProbability { get; set; }

    public LinkConditions Clone()
    {
        var copy = (LinkConditions)MemberwiseClone();
        copy.BurstLoss = BurstLoss?.Clone();
        return copy;
    }
}
