using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>What a <see cref="QuicConnection"/> runs on: the managed transport or a System.Net.Quic connection.</summary>
internal abstract class QuicConnectionImpl
{
    public abstract IPEndPoint LocalEndPoint { get; }

    public abstract IPEndPoint RemoteEndPoint { get; }

    public abstract string TargetHostName { get; }

    public abstract X509Certificate? RemoteCertificate { get; }

    public abstract SslApplicationProtocol NegotiatedApplicationProtocol { get; }

    public abstract TlsCipherSuite NegotiatedCipherSuite { get; }

    public abstract ValueTask<QuicStream> OpenOutboundStreamAsync(QuicStreamType type, CancellationToken cancellationToken);

    public abstract ValueTask<QuicStream> AcceptInboundStreamAsync(CancellationToken cancellationToken);

    public abstract ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();

    /// <summary>The handshake resumed a session from a ticket.</summary>
    public virtual bool IsResumed => false;

    /// <summary>The server accepted this connection's 0-RTT data.</summary>
    public virtual bool IsEarlyDataAccepted => false;

    /// <summary>Completes when the handshake did (ConnectAsync may return earlier with 0-RTT).</summary>
    public virtual ValueTask WaitForHandshakeAsync(CancellationToken cancellationToken) => ValueTask.CompletedTask;

    /// <summary>Starts a key update (RFC 9001 §6) if allowed now; providers without one throw <see cref="NotSupportedException"/>.</summary>
    public virtual ValueTask<bool> UpdateKeysAsync(CancellationToken cancellationToken)
        => throw new NotSupportedException("Initiating a key update is available on the managed provider only.");

    /// <summary>The QUIC version in use; providers that do not tell throw <see cref="NotSupportedException"/>.</summary>
    public virtual QuicProtocolVersion NegotiatedProtocolVersion
        => throw new NotSupportedException("The negotiated QUIC version is available on the managed provider only.");

    /// <summary>The message of the msquic provider's datagram members.</summary>
    internal const string DatagramsNotSupportedMessage =
        "DATAGRAM (RFC 9221) is available on the managed provider only: System.Net.Quic over msquic does not expose datagrams in .NET 10.";

    /// <summary>Largest datagram payload sendable now (RFC 9221); providers without datagrams throw <see cref="NotSupportedException"/>.</summary>
    public virtual int MaxDatagramSize => throw new NotSupportedException(DatagramsNotSupportedMessage);

    /// <summary>Queues a datagram; providers without datagrams throw <see cref="NotSupportedException"/>.</summary>
    public virtual ValueTask<QuicDatagramSendResult> SendDatagramAsync(ReadOnlyMemory<byte> datagram, CancellationToken cancellationToken)
        => throw new NotSupportedException(DatagramsNotSupportedMessage);

    /// <summary>Takes the next received datagram; providers without datagrams throw <see cref="NotSupportedException"/>.</summary>
    public virtual ValueTask<ReadOnlyMemory<byte>> ReceiveDatagramAsync(CancellationToken cancellationToken)
        => throw new NotSupportedException(DatagramsNotSupportedMessage);

    /// <summary>Statistics snapshot; providers without them throw <see cref="NotSupportedException"/>.</summary>
    public virtual QuicConnectionStatistics GetStatistics()
        => throw new NotSupportedException("Connection statistics are available on the managed provider only.");

    /// <summary>Client migration to a new local socket (RFC 9000 §9.2); providers without it throw <see cref="PlatformNotSupportedException"/>.</summary>
    public virtual ValueTask MigrateAsync(IPEndPoint? localEndPoint, CancellationToken cancellationToken)
        => throw new PlatformNotSupportedException("Connection migration is available on the managed provider only: System.Net.Quic (msquic) has no migration API.");
}
