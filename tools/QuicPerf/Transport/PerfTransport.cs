using System.Net;
namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>
/// A loopback server (answering <see cref="PerfRequestHandler"/> on every stream it accepts) plus the means to
/// connect clients to it, for one provider.
/// </summary>
public abstract class PerfTransport : IAsyncDisposable
{
    public abstract PerfTransportKind Kind { get; }

    /// <summary>True for QUIC (many streams on one connection); false for TCP (one stream per connection).</summary>
    public abstract bool MultiplexesStreams { get; }

    public abstract IPEndPoint ListenEndPoint { get; }

    public abstract Task StartAsync(PerfTransportOptions options, CancellationToken cancellationToken);

    /// <summary>Client-only use (-c): no server here, connections go to <see cref="PerfTransportOptions.Remote"/>.</summary>
    public abstract void ConfigureClient(PerfTransportOptions options);

    /// <summary>Where clients connect: the remote server, or this process's own.</summary>
    protected static IPEndPoint Target(PerfTransportOptions options, Func<IPEndPoint> listenEndPoint)
        => options.Remote ?? new IPEndPoint(options.Address, listenEndPoint().Port);

    /// <summary>Connects a new client (a full handshake).</summary>
    public abstract Task<PerfClientConnection> ConnectAsync(CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();

    /// <summary>The transport for a provider of this library: how the library's own selection maps onto QuicPerf.</summary>
    public static PerfTransportKind FromLibraryProvider(System.Net.Quic.Managed.QuicProvider provider)
        => provider == System.Net.Quic.Managed.QuicProvider.MsQuic ? PerfTransportKind.LibraryMsQuic : PerfTransportKind.Managed;

    public static string DisplayName(PerfTransportKind kind) => kind switch
    {
        PerfTransportKind.Managed => "managed",
        PerfTransportKind.MsQuic => "msquic-direct",
        PerfTransportKind.LibraryMsQuic => "msquic",
        _ => "tcp-tls",
    };

    /// <summary>False with a human-readable reason when the provider cannot run on this machine.</summary>
    public static bool IsAvailable(PerfTransportKind kind, out string reason)
    {
        switch (kind)
        {
            case PerfTransportKind.Managed:
                if (System.Net.Quic.Managed.QuicConnection.IsProviderSupported(System.Net.Quic.Managed.QuicProvider.Managed))
                {
                    reason = "";
                    return true;
                }
                reason = "System.Net.Quic.Managed.QuicConnection.IsProviderSupported(QuicProvider.Managed) is false.";
                return false;
            case PerfTransportKind.MsQuic:
                return MsQuicTransport.IsAvailable(out reason);
            case PerfTransportKind.LibraryMsQuic:
                if (System.Net.Quic.Managed.QuicConnection.IsProviderSupported(System.Net.Quic.Managed.QuicProvider.MsQuic))
                {
                    reason = "";
                    return true;
                }
                reason = System.Net.Quic.Managed.QuicProviderSelection.NotSupported(System.Net.Quic.Managed.QuicProvider.MsQuic).Message;
                return false;
            default:
                reason = "";
                return true;
        }
    }

    public static PerfTransport Create(PerfTransportKind kind) => kind switch
    {
        PerfTransportKind.Managed => new ManagedQuicTransport(System.Net.Quic.Managed.QuicProvider.Managed),
        PerfTransportKind.LibraryMsQuic => new ManagedQuicTransport(System.Net.Quic.Managed.QuicProvider.MsQuic),
        PerfTransportKind.MsQuic => new MsQuicTransport(),
        _ => new TcpTlsTransport(),
    };
}
