using System.Net.Quic.Managed.Io;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A stream's WriteAsync handed to the driver thread. It completes once the core's send buffer accepted every byte
/// (backpressure: the app's buffer is free again then), not when the peer acknowledged them. One per stream, reused for
/// every write (one write at a time), so steady-state writes allocate nothing.
/// </summary>
internal sealed class StreamWriteRequest : IDriverWorkItem, IValueTaskSource
{
    private readonly ManagedStream _stream;
    private ManualResetValueTaskSourceCore<bool> _completion = new() { RunContinuationsAsynchronously = true };
    private CancellationTokenRegistration _registration;

    public StreamWriteRequest(ManagedStream stream) => _stream = stream;

    public ReadOnlyMemory<byte> Remaining { get; set; }

    public bool Fin { get; private set; }

    public CancellationToken CancellationToken { get; private set; }

    /// <summary>The generation of the write in progress.</summary>
    public short Version => _completion.Version;

    /// <summary>App thread: arms the request for one write (the stream guarantees no other write is in progress).</summary>
    public ValueTask Start(ReadOnlyMemory<byte> buffer, bool fin, CancellationToken cancellationToken)
    {
        _completion.Reset();
        Remaining = buffer;
        Fin = fin;
        CancellationToken = cancellationToken;
        _registration = cancellationToken.CanBeCanceled
            ? cancellationToken.UnsafeRegister(static state =>
            {
                var request = (StreamWriteRequest)state!;
                request._stream.PostCancel(request, request.Version);
            }, this)
            : default;
        return new ValueTask(this, _completion.Version);
    }

    public void Execute(long nowUs) => _stream.StartWrite(this);

    public void Abandon() => _stream.OnWriteAbandoned(this);

    public void Complete()
    {
        _registration.Dispose();
        Remaining = default;
        _completion.SetResult(true);
    }

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        Remaining = default;
        _completion.SetException(exception is OperationCanceledException ? new OperationCanceledException(CancellationToken) : exception);
    }

    public void GetResult(short token)
    {
        try
        {
            _completion.GetResult(token);
        }
        finally
        {
            _stream.OnWriteConsumed();
        }
    }

    public ValueTaskSourceStatus GetStatus(short token) => _completion.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _completion.OnCompleted(continuation, state, token, flags);
}
