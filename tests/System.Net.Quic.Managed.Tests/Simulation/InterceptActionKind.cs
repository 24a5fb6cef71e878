namespace System.Net.Quic.Managed.Tests.Simulation;

internal enum InterceptActionKind
{
    /// <summary>Continue through the link normally (possibly after in-place edits).</summary>
    Pass,

    /// <summary>Discard (counted as <see cref="DropCause.Interceptor"/>).</summary>
    Drop,

    /// <summary>Continue, arriving <see cref="InterceptAction.DelayUs"/> later than the link alone would deliver it.</summary>
    Delay,

    /// <summary>Continue, and deliver one extra copy <see cref="InterceptAction.DelayUs"/> after the original.</summary>
    Replay,
}
