using System.Net.Quic.Managed.Io;

namespace System.Net.Quic.Managed;

/// <summary>An API operation to run on the driver thread: a static callback and its state (no captured closures).</summary>
internal sealed class DriverCall : IDriverWorkItem
{
    private readonly Action<object, long> _action;
    private readonly object _state;

    public DriverCall(Action<object, long> action, object state)
    {
        _action = action;
        _state = state;
    }

    public void Execute(long nowUs) => _action(_state, nowUs);
}
