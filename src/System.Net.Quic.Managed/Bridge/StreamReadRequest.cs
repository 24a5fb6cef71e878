using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>
/// A stream's ReadAsync waiting for data: only when nothing was buffered (a read of buffered data completes on the
/// caller's thread without it). The driver thread completes it when data, FIN, a reset or the connection's end
/// arrives; its token's cancellation completes it on the cancelling thread. One per stream, reused for every read (a
/// stream allows one read at a time), so steady-state reads allocate nothing: the result is a
/// <see cref="ValueTask{TResult}"/> over this object.
/// </summary>
internal sealed class StreamReadRequest : IValueTaskSource<int>
{
    private readonly ManagedStream _stream;
    private ManualResetValueTaskSourceCore<int> _completion = new() { RunContinuationsAsynchronously = true };
    private CancellationTokenRegistration _registration;

    // The result of a read completed with data buffered: the bytes are copied as the result is taken.
    private const int BufferedData = -1;
    private Memory<byte> _completedBuffer;

    public StreamReadRequest(ManagedStream stream) => _stream = stream;

    public Memory<byte> Buffer { get; private set; }

    public CancellationToken CancellationToken { get; private set; }

    /// <summary>The generation of the read in progress.</summary>
    public short Version => _completion.Version;

    /// <summary>App thread, under the stream's receive lock: arms the request for one read.</summary>
    public void Arm(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        _completion.Reset();
        Buffer = buffer;
        CancellationToken = cancellationToken;
        _registration = default;
    }

    /// <summary>
    /// App thread, under the stream's receive lock, once the request is the stream's waiter: a cancellation that
    /// races with it runs inline (the lock is reentrant) and completes the request before this returns.
    /// </summary>
    public void RegisterCancellation()
    {
        if (!CancellationToken.CanBeCanceled) return;
        _registration = CancellationToken.UnsafeRegister(static (state, token) =>
        {
            var request = (StreamReadRequest)state!;
            request._stream.CancelRead(request, token);
        }, this);
    }

    /// <summary>
    /// Outside the receive lock, after the request stopped being the waiter: the registration is disposed first (it
    /// waits for a callback already running, which finds no waiter), so no cancellation can reach a later read.
    /// </summary>
    public void Complete(int bytes)
    {
        _registration.Dispose();
        Buffer = default;
        _completion.SetResult(bytes);
    }

    /// <summary>
    /// As <see cref="Complete"/>, once data is buffered: the bytes are copied into the read's buffer as its result is
    /// taken (<see cref="GetResult"/>, on the reader's thread), not on the driver's thread that completes it.
    /// </summary>
    public void CompleteWithBufferedData()
    {
        _completedBuffer = Buffer;
        Complete(BufferedData);
    }

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        Buffer = default;
        _completion.SetException(exception);
    }

    public int GetResult(short token)
    {
        try
        {
            int result = _completion.GetResult(token);
            if (result != BufferedData) return result;
            Memory<byte> buffer = _completedBuffer;
            _completedBuffer = default;
            return _stream.ReadBufferedForCompletedRead(buffer);
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
