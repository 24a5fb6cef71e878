using System.Collections.Generic;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;

namespace System.Net.Quic.Managed;

/// <summary>Options for a <see cref="QuicListener"/>. Mirrors System.Net.Quic.QuicListenerOptions.</summary>
public sealed class QuicListenerOptions
{
    /// <summary>The endpoint to listen on. Mandatory.</summary>
    public IPEndPoint ListenEndPoint { get; set; } = null!;

    /// <summary>The application protocols (ALPN) accepted by this listener. Mandatory, at least one.</summary>
    public List<SslApplicationProtocol> ApplicationProtocols { get; set; } = null!;

    /// <summary>Number of connections that may wait to be accepted before new ones are refused. Default 512.</summary>
    public int ListenBacklog { get; set; }

    /// <summary>Selects the options of each incoming connection, given its ClientHello information. Mandatory.</summary>
    public Func<QuicConnection, SslClientHelloInfo, CancellationToken, ValueTask<QuicServerConnectionOptions>> ConnectionOptionsCallback { get; set; } = null!;

    internal void Validate(string argumentName)
    {
        if (ListenEndPoint is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ListenEndPoint)}' must be specified and not null to start a listener.");
        }
        if (ApplicationProtocols is null || ApplicationProtocols.Count == 0)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ApplicationProtocols)}' must be specified and contain at least one item to start a listener.");
        }
        if (ConnectionOptionsCallback is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ConnectionOptionsCallback)}' must be specified and not null to start a listener.");
        }
        if (ListenBacklog < 0)
        {
            throw new ArgumentOutOfRangeException(argumentName, ListenBacklog, $"'{nameof(ListenBacklog)}' must not be negative.");
        }
        if (ListenBacklog == 0)
        {
            ListenBacklog = QuicDefaults.DefaultListenBacklog;
        }
    }
}
