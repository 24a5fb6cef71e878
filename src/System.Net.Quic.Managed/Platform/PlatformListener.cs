#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported.
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using P = System.Net.Quic;

namespace System.Net.Quic.Managed.Platform;

/// <summary>A <see cref="QuicListener"/> delegating to a System.Net.Quic listener (msquic provider).</summary>
internal sealed class PlatformListener : QuicListenerImpl
{
    private readonly ConditionalWeakTable<P.QuicConnection, QuicConnection> _owners;
    private readonly P.QuicListener _inner;

    private PlatformListener(P.QuicListener inner, ConditionalWeakTable<P.QuicConnection, QuicConnection> owners)
    {
        _inner = inner;
        _owners = owners;
    }

    public static async ValueTask<QuicListener> ListenAsync(QuicListenerOptions options, CancellationToken cancellationToken)
    {
        var owners = new ConditionalWeakTable<P.QuicConnection, QuicConnection>();
        var callback = options.ConnectionOptionsCallback;
        var platformOptions = new P.QuicListenerOptions
        {
            ListenEndPoint = options.ListenEndPoint,
            ApplicationProtocols = options.ApplicationProtocols,
            ListenBacklog = options.ListenBacklog,
            ConnectionOptionsCallback = async (connection, hello, token) =>
            {
                // The app sees our QuicConnection, the same object AcceptConnectionAsync returns later.
                QuicConnection owner = owners.GetValue(connection, static c => new QuicConnection { Impl = new PlatformConnection(c) });
                QuicServerConnectionOptions ours = await callback(owner, hello, token).ConfigureAwait(false);
                return PlatformOptionsMapping.ToPlatform(ours, owner);
            },
        };
        try
        {
            P.QuicListener inner = await P.QuicListener.ListenAsync(platformOptions, cancellationToken).ConfigureAwait(false);
            return new QuicListener(new PlatformListener(inner, owners));
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override IPEndPoint LocalEndPoint => _inner.LocalEndPoint;

    public override async ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken)
    {
        try
        {
            P.QuicConnection connection = await _inner.AcceptConnectionAsync(cancellationToken).ConfigureAwait(false);
            return _owners.GetValue(connection, static c => new QuicConnection { Impl = new PlatformConnection(c) });
        }
        catch (P.QuicException e)
        {
            throw PlatformExceptions.Translate(e);
        }
    }

    public override ValueTask DisposeAsync() => _inner.DisposeAsync();

    public override string ToString() => _inner.ToString();
}
