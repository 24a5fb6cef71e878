using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A one-shot completion (a stream's ReadsClosed / WritesClosed) whose <see cref="Task"/> is made only when someone
/// asks for it. Most streams are read and written to their end and disposed without anybody looking at these tasks,
/// so they cost no allocation (a TaskCompletionSource and its Task per signal would be four a stream on each side).
/// </summary>
/// <remarks>
/// One field holds the state, changed with compare-and-swap so it can be completed on the driver thread while the
/// application reads <see cref="Task"/>: null (pending, nobody waiting), <see cref="s_succeeded"/> (completed),
/// an <see cref="Exception"/> (faulted), or the <see cref="TaskCompletionSource"/> that was handed out (which then
/// carries the outcome). Continuations run asynchronously. A fault is marked observed (no
/// UnobservedTaskException): nobody has to await these tasks.
/// </remarks>
internal struct ClosedSignal
{
    private static readonly object s_succeeded = new();

    private object? _state;

    public bool IsCompleted
    {
        get
        {
            object? state = Volatile.Read(ref _state);
            return state is TaskCompletionSource tcs ? tcs.Task.IsCompleted : state is not null;
        }
    }

    /// <summary>The task, created on first use (completed at once when the outcome is already known).</summary>
    public Task Task
    {
        get
        {
            while (true)
            {
                object? state = Volatile.Read(ref _state);
                switch (state)
                {
                    case TaskCompletionSource existing:
                        return existing.Task;
                    case null:
                    {
                        var tcs = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                        if (Interlocked.CompareExchange(ref _state, tcs, null) is null) return tcs.Task;
                        break;
                    }
                    default:
                        if (ReferenceEquals(state, s_succeeded)) return Task.CompletedTask;
                        var faulted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                        Fault(faulted, (Exception)state);
                        if (ReferenceEquals(Interlocked.CompareExchange(ref _state, faulted, state), state)) return faulted.Task;
                        break;
                }
            }
        }
    }

    /// <summary>Completes successfully; false when already completed.</summary>
    public bool TrySetResult() => TryComplete(s_succeeded);

    /// <summary>Faults with <paramref name="exception"/> (marked observed); false when already completed.</summary>
    public bool TrySetException(Exception exception) => TryComplete(exception);

    private bool TryComplete(object outcome)
    {
        while (true)
        {
            object? state = Volatile.Read(ref _state);
            if (state is TaskCompletionSource tcs)
            {
                return ReferenceEquals(outcome, s_succeeded) ? tcs.TrySetResult() : Fault(tcs, (Exception)outcome);
            }
            if (state is not null) return false;
            if (Interlocked.CompareExchange(ref _state, outcome, null) is null) return true;
        }
    }

    private static bool Fault(TaskCompletionSource completion, Exception exception)
    {
        if (!completion.TrySetException(exception)) return false;
        _ = completion.Task.Exception; // observed: nobody has to await ReadsClosed / WritesClosed
        return true;
    }
}
