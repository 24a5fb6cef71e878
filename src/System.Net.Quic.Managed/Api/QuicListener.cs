using System.Threading;
using System.Threading.Tasks;
using System.Net.Quic.Managed.Bridge;
using System.Net.Quic.Managed.Platform;

namespace System.Net.Quic.Managed;

/// <summary>Listens for incoming QUIC connections. Mirrors System.Net.Quic.QuicListener.</summary>
public sealed class QuicListener : IAsyncDisposable
{
    private readonly QuicListenerImpl _impl;

    internal QuicListener(QuicListenerImpl impl) => _impl = impl;

    internal QuicListenerImpl Impl => _impl;

    /// <summary>
    /// True when the process-default provider can run here: always for the managed transport; for the msquic
    /// provider (AppContext switch <c>System.Net.Quic.Managed.Provider</c> or <c>DOTNET_SYSTEM_NET_QUIC_PROVIDER</c>
    /// = msquic) only when libmsquic loads.
    /// </summary>
    public static bool IsSupported => QuicProviderSelection.IsSupported(QuicProviderSelection.Default);

    /// <summary>Extension beyond System.Net.Quic: true when <paramref name="provider"/> can run here (the msquic provider needs libmsquic).</summary>
    /// <param name="provider">The provider to ask about.</param>
    public static bool IsProviderSupported(QuicProvider provider) => QuicProviderSelection.IsSupported(provider);

    /// <summary>Starts listening on the process-default provider with <paramref name="options"/>, validated synchronously before any async work.</summary>
    /// <param name="options">The listener options.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken = default)
        => ListenAsync(options, QuicProviderSelection.Default, cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic: listens on <paramref name="provider"/>, which wins over the AppContext switch
    /// and the environment variable (one process can run both providers side by side).
    /// </summary>
    /// <param name="options">The listener options, validated synchronously first.</param>
    /// <param name="provider">The transport to run on.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    /// <exception cref="PlatformNotSupportedException"><paramref name="provider"/> cannot run here (msquic without libmsquic).</exception>
    public static ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, QuicProvider provider, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        QuicProviderSelection.ThrowIfNotUsable(provider, nameof(provider));
        if (provider == QuicProvider.MsQuic && options.RequireRetry)
        {
            throw new PlatformNotSupportedException("'RequireRetry' is supported by the managed provider only: System.Net.Quic (msquic) has no per-listener Retry setting.");
        }
        if (provider == QuicProvider.MsQuic && options.UsesManagedScaleOutOptions)
        {
            throw new PlatformNotSupportedException("'ListenerSockets', 'ReusePortGroupSize', 'ReusePortGroupIndex', 'LoadBalancing', 'StatelessResetKey' and 'AddressValidationTokenKey' are supported by the managed provider only: System.Net.Quic (msquic) has no such listener settings.");
        }
        if (provider == QuicProvider.MsQuic && options.MaxStreamBufferBytes != 0)
        {
            throw new PlatformNotSupportedException("'MaxStreamBufferBytes' is supported by the managed provider only: System.Net.Quic (msquic) has no listener-wide buffer limit.");
        }
        if (provider == QuicProvider.MsQuic && options.ProtocolVersions is not null)
        {
            throw new PlatformNotSupportedException("'ProtocolVersions' is supported by the managed provider only: System.Net.Quic (msquic) has no version setting.");
        }
        if (provider == QuicProvider.MsQuic && options.PreferredAddress is not null)
        {
            throw new PlatformNotSupportedException("'PreferredAddress' is supported by the managed provider only: msquic does not implement the server's preferred address.");
        }
        return provider == QuicProvider.MsQuic
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
