namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>Why <see cref="SimulatedNetwork.RunUntil"/> returned.</summary>
internal enum SimRunResult
{
    /// <summary>The condition became true (the clock stays at the time of the event that made it true).</summary>
    ConditionMet,

    /// <summary>The next event lies after the time bound; the clock was advanced to the bound.</summary>
    TimeLimit,

    /// <summary>Nothing is in flight and no endpoint has a timer: nothing can happen any more. The clock was advanced to the bound.</summary>
    Idle,

    /// <summary><see cref="SimulatedNetwork.MaxEventsPerRun"/> events were processed without meeting the condition (a livelock guard).</summary>
    EventLimit,
}
