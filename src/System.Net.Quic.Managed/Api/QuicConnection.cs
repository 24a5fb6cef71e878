using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>A QUIC connection. Mirrors System.Net.Quic.QuicConnection.</summary>
public sealed class QuicConnection : IAsyncDisposable
{
    private QuicConnection()
    {
    }

    /// <summary>True when this platform can run the managed QUIC transport.</summary>
    public static bool IsSupported => false;

    /// <summary>Connects to a server. Options are validated synchronously before any async work.</summary>
    /// <param name="options">The client options.</param>
    /// <param name="cancellationToken">Cancels the connection attempt.</param>
    public static ValueTask<QuicConnection> ConnectAsync(QuicClientConnectionOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate(nameof(options));
        throw TransportNotReady.Exception();
    }

    /// <summary>The local endpoint.</summary>
    public IPEndPoint LocalEndPoint => throw TransportNotReady.Exception();

    /// <summary>The remote endpoint.</summary>
    public IPEndPoint RemoteEndPoint => throw TransportNotReady.Exception();

    /// <summary>The server name the client asked for (SNI).</summary>
    public string TargetHostName => throw TransportNotReady.Exception();

    /// <summary>The certificate the peer presented, if any.</summary>
    public X509Certificate? RemoteCertificate => throw TransportNotReady.Exception();

    /// <summary>The application protocol agreed by ALPN.</summary>
    public SslApplicationProtocol NegotiatedApplicationProtocol => throw TransportNotReady.Exception();

    /// <summary>The TLS 1.3 cipher suite of the connection.</summary>
    public TlsCipherSuite NegotiatedCipherSuite => throw TransportNotReady.Exception();

    /// <summary>Always TLS 1.3 for QUIC.</summary>
    public SslProtocols SslProtocol => SslProtocols.Tls13;

    /// <summary>Opens a stream of the given type; waits while the peer's stream limit is reached.</summary>
    /// <param name="type">Unidirectional or bidirectional.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicStream> OpenOutboundStreamAsync(QuicStreamType type, CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <summary>Accepts the next stream the peer opened.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    public ValueTask<QuicStream> AcceptInboundStreamAsync(CancellationToken cancellationToken = default) => throw TransportNotReady.Exception();

    /// <summary>Closes the connection with an application error code (CONNECTION_CLOSE type 0x1d).</summary>
    /// <param name="errorCode">The application error code, 0 to 2^62-1.</param>
    /// <param name="cancellationToken">Cancels the wait for the close to be sent.</param>
    public ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(errorCode);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(errorCode, QuicDefaults.MaxErrorCodeValue);
        throw TransportNotReady.Exception();
    }

    /// <summary>Closes the connection with <see cref="QuicConnectionOptions.DefaultCloseErrorCode"/> if still open, and releases it.</summary>
    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <inheritdoc />
    public override string ToString() => nameof(QuicConnection);
}
