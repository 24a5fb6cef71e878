namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>What a <see cref="DatagramInterceptor"/> wants done with the datagram it inspected.</summary>
internal readonly struct InterceptAction
{
    private InterceptAction(InterceptActionKind kind, long delayUs)
    {
        Kind = kind;
        DelayUs = delayUs;
    }

    public InterceptActionKind Kind { get; }

    public long DelayUs { get; }

    public static InterceptAction Pass => default;

    public static InterceptAction Drop => new(InterceptActionKind.Drop, 0);

    public static InterceptAction Delay(long extraDelayUs) => new(InterceptActionKind.Delay, extraDelayUs);

    /// <summary>Deliver normally plus one copy <paramref name="afterUs"/> after the original's arrival.</summary>
    public static InterceptAction Replay(long afterUs) => new(InterceptActionKind.Replay, afterUs);
}
