using System.Net.Quic.Managed.Io;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>An API operation to run on the driver thread: a static callback and its state (no captured closures).</summary>
internal sealed class DriverCall : IDriverWorkItem
{
    private readonly Action<object, long> _action;
    private readonly object _state;
    private readonly Action<object>? _abandon;

    /// <summary><paramref name="abandon"/>, when set, runs instead of <paramref name="action"/> if the driver stopped first.</summary>
    public DriverCall(Action<object, long> action, object state, Action<object>? abandon = null)
    {
        _action = action;
        _state = state;
        _abandon = abandon;
    }

    public void Execute(long nowUs) => _action(_state, nowUs);

    public void Abandon() => _abandon?.Invoke(_state);
}
