using System.Net;
using System.Net.Quic;
using System.Net.Security;
using System.Runtime.InteropServices;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>Server and clients on System.Net.Quic (libmsquic) called directly, bypassing this library, for comparison.</summary>
public sealed class MsQuicTransport : QuicApiTransport<QuicListener, QuicConnection>
{
    /// <summary>False with the reason when libmsquic cannot be loaded (System.Net.Quic then reports unsupported).</summary>
    public static bool IsAvailable(out string reason)
    {
        if (QuicListener.IsSupported && QuicConnection.IsSupported)
        {
            reason = "";
            return true;
        }
        string detail;
        if (OperatingSystem.IsLinux())
        {
            bool loads = NativeLibrary.TryLoad("libmsquic.so.2", out IntPtr handle) || NativeLibrary.TryLoad("libmsquic.so", out handle);
            if (loads) NativeLibrary.Free(handle);
            detail = loads
                ? "libmsquic loads, but System.Net.Quic rejected it (version too old, or OpenSSL without TLS 1.3)"
                : "neither libmsquic.so.2 nor libmsquic.so is found by the dynamic loader (install the 'libmsquic' package from packages.microsoft.com)";
        }
        else
        {
            detail = "msquic is not available on this OS/version";
        }
        reason = $"System.Net.Quic.QuicListener.IsSupported is false: {detail}.";
        return false;
    }

    public override PerfTransportKind Kind => PerfTransportKind.MsQuic;

    protected override async ValueTask<QuicListener> ListenAsync(IPEndPoint endPoint, CancellationToken cancellationToken)
    {
        var options = new QuicListenerOptions
        {
            ListenEndPoint = endPoint,
            ApplicationProtocols = new List<SslApplicationProtocol> { PerfTransportOptions.Alpn },
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
            {
                ServerAuthenticationOptions = Options.CreateServerTlsOptions(),
                MaxInboundBidirectionalStreams = Options.MaxInboundStreams,
                DefaultStreamErrorCode = 0,
                DefaultCloseErrorCode = 0,
                InitialReceiveWindowSizes = ReceiveWindows(),
            }),
        };
        return await QuicListener.ListenAsync(options, cancellationToken).ConfigureAwait(false);
    }

    protected override IPEndPoint LocalEndPoint(QuicListener listener) => listener.LocalEndPoint;

    protected override ValueTask<QuicConnection> AcceptConnectionAsync(QuicListener listener, CancellationToken cancellationToken)
        => listener.AcceptConnectionAsync(cancellationToken);

    protected override async ValueTask<Stream> AcceptInboundStreamAsync(QuicConnection connection, CancellationToken cancellationToken)
        => await connection.AcceptInboundStreamAsync(cancellationToken).ConfigureAwait(false);

    protected override async ValueTask<QuicConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken)
    {
        var options = new QuicClientConnectionOptions
        {
            RemoteEndPoint = remote,
            ClientAuthenticationOptions = Options.CreateClientTlsOptions(),
            DefaultStreamErrorCode = 0,
            DefaultCloseErrorCode = 0,
            MaxInboundBidirectionalStreams = 0,
            InitialReceiveWindowSizes = ReceiveWindows(),
        };
        return await QuicConnection.ConnectAsync(options, cancellationToken).ConfigureAwait(false);
    }

    protected override async ValueTask<Stream> OpenStreamAsync(QuicConnection connection, CancellationToken cancellationToken)
        => await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, cancellationToken).ConfigureAwait(false);

    protected override TlsCipherSuite NegotiatedCipherSuite(QuicConnection connection) => connection.NegotiatedCipherSuite;

    protected override ValueTask CloseAsync(QuicConnection connection) => connection.CloseAsync(0);

    /// <summary>The same window for every stream type, and the connection's.</summary>
    private QuicReceiveWindowSizes ReceiveWindows() => new()
    {
        Connection = Options.ConnectionReceiveWindow,
        LocallyInitiatedBidirectionalStream = Options.StreamReceiveWindow,
        RemotelyInitiatedBidirectionalStream = Options.StreamReceiveWindow,
        UnidirectionalStream = Options.StreamReceiveWindow,
    };
}
