using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>Listens for incoming QUIC connections. Mirrors System.Net.Quic.QuicListener.</summary>
public sealed class QuicListener : IAsyncDisposable
{
    private readonly QuicListenerImpl _impl;

    internal QuicListener(QuicListenerImpl impl) => _impl = impl;

    internal QuicListenerImpl Impl => _impl;

    /// <summary>
    /// True when the selected provider can run here: always for the managed transport; for the msquic provider
    /// (QUIC_MANAGED_PROVIDER=msquic) only when libmsquic loads.
    /// </summary>
    public static bool IsSupported => QuicProviderSelection.IsSupported(QuicProviderSelection.Default);

    /// <summary>Starts listening with <paramref name="options"/>, validated synchronously before any async work.</summary>
    /// <param name="options">The listener options.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken = default)
        => ListenAsync(options, QuicProviderSelection.Default, cancellationToken);

    /// <summary>Starts listening on an explicit provider (tests run both providers in one process).</summary>
    internal static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, QuicProviderKind provider, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        if (!QuicProviderSelection.IsSupported(provider)) throw QuicProviderSelection.NotSupported(provider);
        if (provider == QuicProviderKind.MsQuic && options.RequireRetry)
        {
            throw new PlatformNotSupportedException("'RequireRetry' is supported by the managed provider only: System.Net.Quic (msquic) has no per-listener Retry setting.");
        }
        return provider == QuicProviderKind.MsQuic
            ? PlatformListener.ListenAsync(options, cancellationToken)
            : ManagedListener.ListenAsync(options, cancellationToken);
    }

    /// <summary>The local endpoint the listener is bound to.</summary>
    public IPEndPoint LocalEndPoint => _impl.LocalEndPoint;

    /// <summary>Accepts the next connection whose handshake completed.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken = default) => _impl.AcceptConnectionAsync(cancellationToken);

    /// <summary>Stops listening. Connections already accepted stay open (they keep the socket until they are disposed).</summary>
    public ValueTask DisposeAsync() => _impl.DisposeAsync();

    /// <inheritdoc />
    public override string ToString() => $"QuicListener {_impl.LocalEndPoint}";
}
