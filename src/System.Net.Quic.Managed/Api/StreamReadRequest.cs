using System.Net.Quic.Managed.Io;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>A ReadAsync handed to the driver thread; it completes when data, FIN, a reset or an error arrives.</summary>
internal sealed class StreamReadRequest : IDriverWorkItem
{
    private readonly ManagedStream _stream;
    private readonly TaskCompletionSource<int> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenRegistration _registration;

    public StreamReadRequest(ManagedStream stream, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        _stream = stream;
        Buffer = buffer;
        CancellationToken = cancellationToken;
        if (cancellationToken.CanBeCanceled)
        {
            // Cancellation is decided on the driver thread, so data is never taken from the core for a read nobody awaits.
            _registration = cancellationToken.UnsafeRegister(static state =>
            {
                var request = (StreamReadRequest)state!;
                request._stream.PostCancel(request);
            }, this);
        }
    }

    public Memory<byte> Buffer { get; }

    public CancellationToken CancellationToken { get; }

    public Task<int> Task => _completion.Task;

    public void Execute(long nowUs) => _stream.StartRead(this);

    public void Complete(int bytes)
    {
        _registration.Dispose();
        _completion.TrySetResult(bytes);
    }

    public void CancelOnDriver() => _stream.CancelRead(this);

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        if (exception is OperationCanceledException) _completion.TrySetCanceled(CancellationToken);
        else _completion.TrySetException(exception);
    }
}
