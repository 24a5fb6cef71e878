namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Why the simulator discarded a datagram.</summary>
internal enum DropCause
{
    None = 0,

    /// <summary>The <see cref="DatagramInterceptor"/> returned <see cref="InterceptAction.Drop"/>.</summary>
    Interceptor,

    /// <summary>Longer than <see cref="LinkConditions.MaxDatagramSize"/>.</summary>
    TooLarge,

    /// <summary>Drop-tail: the bottleneck queue was full.</summary>
    QueueOverflow,

    /// <summary><see cref="LinkConditions.LossProbability"/>.</summary>
    RandomLoss,

    /// <summary><see cref="LinkConditions.BurstLoss"/> or <see cref="SimulatedLinkDirection.DropNext"/>.</summary>
    BurstLoss,

    /// <summary>No link between the two hosts.</summary>
    NoRoute,

    /// <summary>Nothing listens at the destination address when the datagram arrives.</summary>
    NoEndpoint,
}
