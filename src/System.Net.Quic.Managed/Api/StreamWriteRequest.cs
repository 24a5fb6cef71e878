using System.Net.Quic.Managed.Io;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>
/// A WriteAsync handed to the driver thread. It completes once the core's send buffer accepted every byte
/// (backpressure: the app's buffer is free again then), not when the peer acknowledged them.
/// </summary>
internal sealed class StreamWriteRequest : IDriverWorkItem
{
    private readonly ManagedStream _stream;
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenRegistration _registration;

    public StreamWriteRequest(ManagedStream stream, ReadOnlyMemory<byte> buffer, bool fin, CancellationToken cancellationToken)
    {
        _stream = stream;
        Remaining = buffer;
        Fin = fin;
        CancellationToken = cancellationToken;
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(static state =>
            {
                var request = (StreamWriteRequest)state!;
                request._stream.PostCancel(request);
            }, this);
        }
    }

    public ReadOnlyMemory<byte> Remaining { get; set; }

    public bool Fin { get; set; }

    public CancellationToken CancellationToken { get; }

    public Task Task => _completion.Task;

    public void Execute(long nowUs) => _stream.StartWrite(this);

    public void Complete()
    {
        _registration.Dispose();
        _completion.TrySetResult();
    }

    public void CancelOnDriver() => _stream.CancelWrite(this);

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        if (exception is OperationCanceledException) _completion.TrySetCanceled(CancellationToken);
        else _completion.TrySetException(exception);
    }
}
