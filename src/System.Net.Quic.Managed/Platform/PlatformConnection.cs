#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported.
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using P = System.Net.Quic;

namespace System.Net.Quic.Managed.Platform;

/// <summary>A <see cref="QuicConnection"/> delegating to a System.Net.Quic connection (msquic provider).</summary>
internal sealed class PlatformConnection : QuicConnectionImpl
{
    private readonly P.QuicConnection _inner;

    public PlatformConnection(P.QuicConnection inner) => _inner = inner;

    public static async ValueTask<QuicConnection> ConnectAsync(QuicClientConnectionOptions options, CancellationToken cancellationToken)
    {
        var owner = new QuicConnection();
        try
        {
            P.QuicConnection inner = await P.QuicConnection.ConnectAsync(PlatformOptionsMapping.ToPlatform(options, owner), cancellationToken).ConfigureAwait(false);
            owner.Impl = new PlatformConnection(inner);
            return owner;
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override IPEndPoint LocalEndPoint => _inner.LocalEndPoint;

    public override IPEndPoint RemoteEndPoint => _inner.RemoteEndPoint;

    public override string TargetHostName => _inner.TargetHostName;

    public override X509Certificate? RemoteCertificate => _inner.RemoteCertificate;

    public override SslApplicationProtocol NegotiatedApplicationProtocol => _inner.NegotiatedApplicationProtocol;

    public override TlsCipherSuite NegotiatedCipherSuite => _inner.NegotiatedCipherSuite;

    public override async ValueTask<QuicStream> OpenOutboundStreamAsync(QuicStreamType type, CancellationToken cancellationToken)
    {
        try
        {
            P.QuicStream stream = await _inner.OpenOutboundStreamAsync((P.QuicStreamType)(int)type, cancellationToken).ConfigureAwait(false);
            return new QuicStream(new PlatformStream(stream));
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override async ValueTask<QuicStream> AcceptInboundStreamAsync(CancellationToken cancellationToken)
    {
        try
        {
            P.QuicStream stream = await _inner.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);
            return new QuicStream(new PlatformStream(stream));
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override async ValueTask CloseAsync(long errorCode, CancellationToken cancellationToken)
    {
        try
        {
            await _inner.CloseAsync(errorCode, cancellationToken).ConfigureAwait(false);
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override ValueTask DisposeAsync() => _inner.DisposeAsync();

    public override string ToString() => _inner.ToString();
}
