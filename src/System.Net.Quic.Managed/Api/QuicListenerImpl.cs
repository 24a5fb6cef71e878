using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>What a <see cref="QuicListener"/> runs on: the managed transport or a System.Net.Quic listener.</summary>
internal abstract class QuicListenerImpl
{
    public abstract IPEndPoint LocalEndPoint { get; }

    public abstract ValueTask<QuicConnection> AcceptConnectionAsync(CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();
}
