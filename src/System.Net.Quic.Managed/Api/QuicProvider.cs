namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: which transport a listener or connection runs on. Pass it to
/// <see cref="QuicConnection.ConnectAsync(QuicClientConnectionOptions, QuicProvider, Threading.CancellationToken)"/> or
/// <see cref="QuicListener.ListenAsync(QuicListenerOptions, QuicProvider, Threading.CancellationToken)"/> to choose per
/// instance (one process can run both). Without it the process default applies: the AppContext switch
/// <c>System.Net.Quic.Managed.Provider</c>, else the environment variable <c>DOTNET_SYSTEM_NET_QUIC_PROVIDER</c>,
/// each <c>managed</c> (the default) or <c>msquic</c>.
/// </summary>
public enum QuicProvider
{
    /// <summary>This library's managed QUIC and TLS 1.3 (needs only UDP sockets).</summary>
    Managed = 0,

    /// <summary>The platform's System.Net.Quic (libmsquic) behind the same public types; supported only where libmsquic loads.</summary>
    MsQuic = 1,
}
