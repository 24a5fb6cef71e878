using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>Listens for incoming QUIC connections. Mirrors System.Net.Quic.QuicListener.</summary>
public sealed class QuicListener : IAsyncDisposable
{
    private QuicListener()
    {
    }

    /// <summary>True when this platform can run the managed QUIC transport.</summary>
    public static bool IsSupported => false;

    /// <summary>Starts listening with <paramref name="options"/>, validated synchronously before any async work.</summary>
    /// <param name="options">The listener options.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        throw TransportNotReady.Exception();
    }

    /// <summary>The local endpoint the listener is bound to.</summary>
    public IPEndPoint LocalEndPoint => throw TransportNotReady.Exception();

    /// <summary>Accepts the next connection whose handshake completed.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <summary>Stops listening and releases the socket.</summary>
    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <inheritdoc />
    public override string ToString() => nameof(QuicListener);
}
