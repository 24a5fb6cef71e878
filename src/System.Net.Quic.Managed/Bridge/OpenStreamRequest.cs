using System.Net.Quic.Managed.Io;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>An OpenOutboundStreamAsync waiting on the driver thread for the peer's stream limit (RFC 9000 §4.6).</summary>
internal sealed class OpenStreamRequest : IDriverWorkItem
{
    private readonly ManagedConnection _connection;
    private readonly TaskCompletionSource<QuicStream> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenRegistration _registration;

    public OpenStreamRequest(ManagedConnection connection, QuicStreamType type, CancellationToken cancellationToken)
    {
        _connection = connection;
        Type = type;
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(static (state, token) => ((OpenStreamRequest)state!)._completion.TrySetCanceled(token), this);
        }
    }

    public QuicStreamType Type { get; }

    /// <summary>Driver thread: the core opened a stream for this request (it then no longer counts as waiting).</summary>
    public bool Opened { get; set; }

    public Task<QuicStream> Task => _completion.Task;

    public void Execute(long nowUs) => _connection.StartOpen(this);

    public void Abandon() => Fail(_connection.EndException ?? QuicExceptionFactory.OperationAborted("The connection was closed."));

    public bool Complete(QuicStream stream)
    {
        _registration.Dispose();
        return _completion.TrySetResult(stream);
    }

    public void Fail(Exception exception)
    {
        _registration.Dispose();
        _completion.TrySetException(exception);
    }
}
