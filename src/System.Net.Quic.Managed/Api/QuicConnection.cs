using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using System.Net.Quic.Managed.Bridge;
using System.Net.Quic.Managed.Platform;

namespace System.Net.Quic.Managed;

/// <summary>A QUIC connection. Mirrors System.Net.Quic.QuicConnection.</summary>
public sealed class QuicConnection : IAsyncDisposable
{
    private QuicConnectionImpl? _impl;

    /// <summary>Created before its implementation: a server connection is handed to the options callback first.</summary>
    internal QuicConnection()
    {
    }

    internal QuicConnectionImpl Impl
    {
        get => _impl ?? throw new InvalidOperationException("The connection is not established yet.");
        set => _impl = value;
    }

    /// <summary>
    /// True when the process-default provider can run here: always for the managed transport; for the msquic
    /// provider (AppContext switch <c>System.Net.Quic.Managed.Provider</c> or <c>DOTNET_SYSTEM_NET_QUIC_PROVIDER</c>
    /// = msquic) only when libmsquic loads.
    /// </summary>
    public static bool IsSupported => QuicProviderSelection.IsSupported(QuicProviderSelection.Default);

    /// <summary>Extension beyond System.Net.Quic: true when <paramref name="provider"/> can run here (the msquic provider needs libmsquic).</summary>
    /// <param name="provider">The provider to ask about.</param>
    public static bool IsProviderSupported(QuicProvider provider) => QuicProviderSelection.IsSupported(provider);

    /// <summary>Connects to a server on the process-default provider. Options are validated synchronously before any async work.</summary>
    /// <param name="options">The client options.</param>
    /// <param name="cancellationToken">Cancels the connection attempt.</param>
    public static ValueTask<QuicConnection> ConnectAsync(QuicClientConnectionOptions options, CancellationToken cancellationToken = default)
        => ConnectAsync(options, QuicProviderSelection.Default, cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic: connects on <paramref name="provider"/>, which wins over the AppContext switch
    /// and the environment variable (one process can run both providers side by side).
    /// </summary>
    /// <param name="options">The client options, validated synchronously first.</param>
    /// <param name="provider">The transport to run on.</param>
    /// <param name="cancellationToken">Cancels the connection attempt.</param>
    /// <exception cref="PlatformNotSupportedException"><paramref name="provider"/> cannot run here (msquic without libmsquic).</exception>
    public static ValueTask<QuicConnection> ConnectAsync(QuicClientConnectionOptions options, QuicProvider provider, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        QuicProviderSelection.ThrowIfNotUsable(provider, nameof(provider));
        if (provider == QuicProvider.MsQuic && options.ProtocolVersions is not null)
        {
            throw new PlatformNotSupportedException("'ProtocolVersions' is supported by the managed provider only: System.Net.Quic (msquic) has no version setting.");
        }
        return provider == QuicProvider.MsQuic
            ? PlatformConnection.ConnectAsync(options, cancellationToken)
            : ManagedConnection.ConnectAsync(options, cancellationToken);
    }

    /// <summary>The local endpoint.</summary>
    public IPEndPoint LocalEndPoint => Impl.LocalEndPoint;

    /// <summary>The remote endpoint.</summary>
    public IPEndPoint RemoteEndPoint => Impl.RemoteEndPoint;

    /// <summary>The server name the client asked for (SNI).</summary>
    public string TargetHostName => Impl.TargetHostName;

    /// <summary>The certificate the peer presented, if any.</summary>
    public X509Certificate? RemoteCertificate => Impl.RemoteCertificate;

    /// <summary>The application protocol agreed by ALPN.</summary>
    public SslApplicationProtocol NegotiatedApplicationProtocol => Impl.NegotiatedApplicationProtocol;

    /// <summary>The TLS 1.3 cipher suite of the connection.</summary>
    public TlsCipherSuite NegotiatedCipherSuite => Impl.NegotiatedCipherSuite;

    /// <summary>Always TLS 1.3 for QUIC.</summary>
    public SslProtocols SslProtocol => SslProtocols.Tls13;

    /// <summary>Opens a stream of the given type; waits while the peer's stream limit is reached.</summary>
    /// <param name="type">Unidirectional or bidirectional.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicStream> OpenOutboundStreamAsync(QuicStreamType type, CancellationToken cancellationToken = default)
    {
        if (type is not (QuicStreamType.Bidirectional or QuicStreamType.Unidirectional)) throw new ArgumentOutOfRangeException(nameof(type));
        return Impl.OpenOutboundStreamAsync(type, cancellationToken);
    }

    /// <summary>Accepts the next stream the peer opened.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicStream> AcceptInboundStreamAsync(CancellationToken cancellationToken = default) => Impl.AcceptInboundStreamAsync(cancellationToken);

    /// <summary>Closes the connection with an application error code (CONNECTION_CLOSE type 0x1d).</summary>
    /// <param name="errorCode">The application error code, 0 to 2^62-1.</param>
    /// <param name="cancellationToken">Cancels the wait for the close to be sent.</param>
    public ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(errorCode);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(errorCode, QuicDefaults.MaxErrorCodeValue);
        return Impl.CloseAsync(errorCode, cancellationToken);
    }

    /// <summary>
    /// Extension beyond System.Net.Quic: true when the handshake resumed an earlier session from a ticket of
    /// <see cref="QuicClientConnectionOptions.SessionTicketStore"/> (client) or a ticket this server issued (server).
    /// Final once the handshake completed.
    /// </summary>
    public bool IsResumed => Impl.IsResumed;

    /// <summary>
    /// Extension beyond System.Net.Quic: true when 0-RTT data was accepted (client: the server took our early data;
    /// server: we took the client's). Final once the handshake completed; false before.
    /// </summary>
    public bool IsEarlyDataAccepted => Impl.IsEarlyDataAccepted;

    /// <summary>
    /// Extension beyond System.Net.Quic: completes when the handshake has completed. <see cref="ConnectAsync(QuicClientConnectionOptions, CancellationToken)"/>
    /// already waits for it, except with <see cref="QuicClientConnectionOptions.EnableEarlyData"/>, where it returns once
    /// 0-RTT data can be sent. Fails with the connection's <see cref="QuicException"/> if the handshake fails.
    /// </summary>
    public ValueTask WaitForHandshakeAsync(CancellationToken cancellationToken = default) => Impl.WaitForHandshakeAsync(cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic: counters of this connection (datagrams, bytes, packets, losses, RTT,
    /// congestion window), as of the I/O thread's latest step. Managed provider only.
    /// </summary>
    public QuicConnectionStatistics GetStatistics() => Impl.GetStatistics();

    /// <summary>
    /// Extension beyond System.Net.Quic: starts a key update (RFC 9001 §6.1): packets sent from now on are protected
    /// with the next 1-RTT keys and flip the key phase bit; the peer answers by updating its own. Managed provider only
    /// (the msquic provider throws <see cref="NotSupportedException"/>: System.Net.Quic has no such call).
    /// <para>
    /// The result is false, and nothing changes, when RFC 9001 §6 does not allow an update yet: before the handshake is
    /// confirmed (a client learns that from HANDSHAKE_DONE, about one round trip after <see cref="ConnectAsync(QuicClientConnectionOptions, CancellationToken)"/>
    /// returns), or while no packet protected with the current keys has been acknowledged (the previous update is not
    /// known to have arrived). Try again later. The update itself is counted in
    /// <see cref="QuicConnectionStatistics.KeyUpdates"/>.
    /// </para>
    /// </summary>
    /// <param name="cancellationToken">Cancels the wait for the I/O thread's answer.</param>
    /// <returns>True when the update was started.</returns>
    /// <exception cref="QuicException">The connection has ended.</exception>
    public ValueTask<bool> UpdateKeysAsync(CancellationToken cancellationToken = default) => Impl.UpdateKeysAsync(cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic: the QUIC version the connection uses (RFC 9369 version 2 when both sides chose
    /// it, possibly through compatible version negotiation, RFC 9368). Final once the handshake completed. Managed
    /// provider only: the msquic provider throws <see cref="NotSupportedException"/>.
    /// </summary>
    public QuicProtocolVersion NegotiatedProtocolVersion => Impl.NegotiatedProtocolVersion;

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9221): the largest datagram payload <see cref="SendDatagramAsync"/> accepts
    /// now, that is the smaller of what the peer's max_datagram_frame_size allows and what fits in one packet on the
    /// current path (UDP payload size minus the worst-case 1-RTT header, AEAD tag and DATAGRAM frame header). 0 when the
    /// peer did not advertise max_datagram_frame_size (DATAGRAM not negotiated) or the handshake has not completed.
    /// Managed provider only: the msquic provider throws <see cref="NotSupportedException"/> (System.Net.Quic in .NET 10
    /// does not expose datagrams).
    /// </summary>
    public int MaxDatagramSize => Impl.MaxDatagramSize;

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9221): queues one unreliable datagram. The payload is copied; the call
    /// returns once it is queued and the returned task completes when its fate is known:
    /// <see cref="QuicDatagramSendResult.Acknowledged"/>, <see cref="QuicDatagramSendResult.Lost"/> (declared lost,
    /// never retransmitted) or <see cref="QuicDatagramSendResult.Dropped"/> (never sent: the send queue of 256 datagrams
    /// was full and this was the oldest). Awaiting each send before the next limits the rate to one datagram per round
    /// trip; to stream datagrams, keep the tasks and look at them later (or read the counters in
    /// <see cref="GetStatistics"/>). Datagrams are congestion controlled and share packets fairly with stream data.
    /// Cancelling <paramref name="cancellationToken"/> ends the wait, not the send. Managed provider only (the msquic
    /// provider throws <see cref="NotSupportedException"/>).
    /// </summary>
    /// <param name="datagram">The payload, at most <see cref="MaxDatagramSize"/> bytes (it may be empty).</param>
    /// <param name="cancellationToken">Cancels the wait for the datagram's fate.</param>
    /// <returns>What became of the datagram.</returns>
    /// <exception cref="ArgumentException"><paramref name="datagram"/> is longer than <see cref="MaxDatagramSize"/>.</exception>
    /// <exception cref="InvalidOperationException">DATAGRAM is not negotiated: the peer did not advertise max_datagram_frame_size (<see cref="MaxDatagramSize"/> is 0).</exception>
    /// <exception cref="QuicException">The connection has ended (also for sends still waiting for their fate when it ends).</exception>
    public ValueTask<QuicDatagramSendResult> SendDatagramAsync(ReadOnlyMemory<byte> datagram, CancellationToken cancellationToken = default)
        => Impl.SendDatagramAsync(datagram, cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9221): the next datagram the peer sent. Needs
    /// <see cref="QuicConnectionOptions.MaxDatagramFrameSize"/> above 0 (that advertises max_datagram_frame_size). Received
    /// datagrams wait in a queue of <see cref="QuicConnectionOptions.DatagramReceiveQueueCapacity"/>; when it is full the
    /// oldest is dropped and counted in <see cref="QuicConnectionStatistics.DatagramsReceiveDropped"/>. Managed provider
    /// only (the msquic provider throws <see cref="NotSupportedException"/>).
    /// </summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The datagram's payload.</returns>
    /// <exception cref="InvalidOperationException">Receiving datagrams was not enabled (<see cref="QuicConnectionOptions.MaxDatagramFrameSize"/> is 0).</exception>
    /// <exception cref="QuicException">The connection has ended and no datagram is left.</exception>
    public ValueTask<ReadOnlyMemory<byte>> ReceiveDatagramAsync(CancellationToken cancellationToken = default) => Impl.ReceiveDatagramAsync(cancellationToken);

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9000 §9.2, §9.5): moves a client connection to a new local socket (bound to
    /// <paramref name="localEndPoint"/>, or to an ephemeral port of the wildcard address), with a connection ID of the server
    /// not used before, and validates the new path with PATH_CHALLENGE. Streams go on without loss; the socket the connection
    /// left is closed (the connection's first socket stays open, unused, until the connection ends). Completes when the new
    /// path is validated; <see cref="LocalEndPoint"/> then names the new socket. Managed provider only: the msquic provider
    /// throws <see cref="PlatformNotSupportedException"/>.
    /// </summary>
    /// <param name="localEndPoint">The local address to bind the new socket to; null: the wildcard address, any port.</param>
    /// <param name="cancellationToken">Cancels the wait (the migration itself goes on).</param>
    /// <exception cref="InvalidOperationException">This is a server connection (servers do not migrate, RFC 9000 §9).</exception>
    /// <exception cref="ArgumentException"><paramref name="localEndPoint"/> is not of the remote endpoint's address family.</exception>
    /// <exception cref="QuicException">The handshake is not confirmed yet, the server sent disable_active_migration, the server
    /// gave no unused connection ID, or the new path did not answer (<see cref="QuicError.ConnectionTimeout"/>: the connection
    /// stays on its previous path).</exception>
    /// <exception cref="System.Net.Sockets.SocketException">The new socket could not be bound.</exception>
    public ValueTask MigrateAsync(IPEndPoint? localEndPoint = null, CancellationToken cancellationToken = default) => Impl.MigrateAsync(localEndPoint, cancellationToken);

    /// <summary>Closes the connection with <see cref="QuicConnectionOptions.DefaultCloseErrorCode"/> if still open, and releases it.</summary>
    public ValueTask DisposeAsync() => _impl?.DisposeAsync() ?? ValueTask.CompletedTask;

    /// <inheritdoc />
    public override string ToString() => _impl?.ToString() ?? nameof(QuicConnection);
}
