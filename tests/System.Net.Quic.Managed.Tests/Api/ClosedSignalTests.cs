using System.Net.Quic.Managed.Bridge;
namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>ReadsClosed / WritesClosed are made lazily (<see cref="ClosedSignal"/>): the outcome must not depend on when the task is asked for.</summary>
public class ClosedSignalTests
{
    [Fact]
    public void CompletedBeforeAsked_IsTheCompletedTask()
    {
        var signal = new ClosedSignal();
        Assert.False(signal.IsCompleted);
        Assert.True(signal.TrySetResult());
        Assert.False(signal.TrySetResult());
        Assert.False(signal.TrySetException(new InvalidOperationException()));
        Assert.True(signal.IsCompleted);
        Assert.Equal(TaskStatus.RanToCompletion, signal.Task.Status);
    }

    [Fact]
    public void FaultedBeforeAsked_KeepsItsExceptionAndOneTask()
    {
        var signal = new ClosedSignal();
        var error = new InvalidOperationException("x");
        Assert.True(signal.TrySetException(error));
        Assert.False(signal.TrySetResult());
        Assert.True(signal.IsCompleted);
        Task task = signal.Task;
        Assert.Same(task, signal.Task);
        Assert.Same(error, Assert.Single(task.Exception!.InnerExceptions));
    }

    [Fact]
    public async Task AskedBeforeCompletion_CompletesAsynchronously()
    {
        var signal = new ClosedSignal();
        Task task = signal.Task;
        Assert.Same(task, signal.Task);
        Assert.False(task.IsCompleted);
        Assert.False(signal.IsCompleted);
        int completingThread = Environment.CurrentManagedThreadId;
        bool completing = false;
        bool ranInline = false;
        Task continuation = task.ContinueWith(
            _ => ranInline = Volatile.Read(ref completing) && Environment.CurrentManagedThreadId == completingThread,
            TaskContinuationOptions.ExecuteSynchronously);
        Volatile.Write(ref completing, true);
        Assert.True(signal.TrySetResult());
        Volatile.Write(ref completing, false);
        await continuation;
        Assert.True(signal.IsCompleted);
        Assert.False(ranInline); // continuations run asynchronously (TaskCreationOptions.RunContinuationsAsynchronously)
        Assert.Equal(TaskStatus.RanToCompletion, task.Status);
    }

    [Fact]
    public void AskedThenFaulted_IsObserved()
    {
        var signal = new ClosedSignal();
        Task task = signal.Task;
        Assert.True(signal.TrySetException(new QuicException(QuicError.OperationAborted, null, "aborted")));
        Assert.False(signal.TrySetException(new InvalidOperationException()));
        Assert.Equal(TaskStatus.Faulted, task.Status);
        Assert.IsType<QuicException>(task.Exception!.InnerException);
    }

    [Fact]
    public void RacingCompletionAndFirstAsk_AgreeOnOneOutcome()
    {
        for (int i = 0; i < 2000; i++)
        {
            var holder = new SignalHolder();
            Task? seen = null;
            bool? won = null;
            Parallel.Invoke(
                () => seen = holder.Signal.Task,
                () => won = i % 2 == 0 ? holder.Signal.TrySetResult() : holder.Signal.TrySetException(new InvalidOperationException()));
            Assert.True(won);
            Assert.True(seen!.IsCompleted);
            Assert.Equal(i % 2 == 0 ? TaskStatus.RanToCompletion : TaskStatus.Faulted, seen.Status);
            Assert.Equal(seen.Status, holder.Signal.Task.Status);
        }
    }

    private sealed class SignalHolder
    {
        public ClosedSignal Signal;
    }
}
