using System.Net.Quic.Managed.Io;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace System.Net.Quic.Managed;

/// <summary>
/// A stream's ReadAsync handed to the driver thread; it completes when data, FIN, a reset or an error arrives. One per
/// stream, reused for every read (a stream allows one read at a time), so steady-state reads allocate nothing: the
/// result is a <see cref="ValueTask{TResult}"/> over this object, versioned so a stale cancellation cannot touch a later read.
/// </summary>
internal sealed class StreamReadRequest : IDriverWorkItem, IValueTaskSource<int>
{
    private readonly ManagedStream _stream;
    private ManualResetValueTaskSourceCore<int> _completion = new() { RunContinuationsAsynchronously = true };
    private CancellationTokenRegistration _registration;

    public StreamReadRequest(ManagedStream stream) => _stream = stream;

    public Memory<byte> Buffer { get; private set; }

    public CancellationToken CancellationToken { get; private set; }

    /// <summary>The generation of the read in progress.</summary>
    public short Version => _completion.Version;

    /// <summary>App thread: arms the request for one read (the stream guarantees no other read is in progress).</summary>
    public ValueTask<int> Start(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        _completion.Reset();
        Buffer = buffer;
        CancellationToken = cancellationToken;
        // Cancellation is decided on the driver thread, so data is never taken from the core for a read nobody awaits.
        _registration = cancellationToken.CanBeCanceled
            ? cancellationToken.UnsafeRegister(static state =>
            {
                var request = (StreamReadRequest)state!;
                request._stream.PostCancel(request, request.Version);
            }, this)
            : default;
        return new ValueTask<int>(this, _completion.Version);
    }

    public void Execute(long nowUs) => _stream.StartRead(this);

    public void Abandon() => _stream.OnReadAbandoned(this);

    public void Complete(int bytes)
    {
        _registration.Dispose();
        Buffer = default;
        _completion.SetResult(bytes);
    }

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        Buffer = default;
        _completion.SetException(exception is OperationCanceledException ? new OperationCanceledException(CancellationToken) : exception);
    }

    public int GetResult(short token)
    {
        try
        {
            return _completion.GetResult(token);
        }
        finally
        {
            // Only now may the next read start: it resets this object.
            _stream.OnReadConsumed();
        }
    }

    public ValueTaskSourceStatus GetStatus(short token) => _completion.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _completion.OnCompleted(continuation, state, token, flags);
}
