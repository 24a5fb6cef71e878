#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported (Linux, Windows, macOS with libmsquic).
using P = System.Net.Quic;

namespace System.Net.Quic.Managed;

/// <summary>Our options classes as System.Net.Quic's, for the msquic provider.</summary>
internal static class PlatformOptionsMapping
{
    private static void CopyCommon(QuicConnectionOptions from, P.QuicConnectionOptions to, QuicConnection owner)
    {
        to.MaxInboundBidirectionalStreams = from.MaxInboundBidirectionalStreams;
        to.MaxInboundUnidirectionalStreams = from.MaxInboundUnidirectionalStreams;
        to.IdleTimeout = from.IdleTimeout;
        to.DefaultStreamErrorCode = from.DefaultStreamErrorCode;
        to.DefaultCloseErrorCode = from.DefaultCloseErrorCode;
        to.KeepAliveInterval = from.KeepAliveInterval;
        to.HandshakeTimeout = from.HandshakeTimeout;
        QuicReceiveWindowSizes w = from.InitialReceiveWindowSizes;
        to.InitialReceiveWindowSizes = new P.QuicReceiveWindowSizes
        {
            Connection = w.Connection,
            LocallyInitiatedBidirectionalStream = w.LocallyInitiatedBidirectionalStream,
            RemotelyInitiatedBidirectionalStream = w.RemotelyInitiatedBidirectionalStream,
            UnidirectionalStream = w.UnidirectionalStream,
        };
        if (from.StreamCapacityCallback is { } callback)
        {
            to.StreamCapacityCallback = (_, args) => callback(owner, new QuicStreamCapacityChangedArgs
            {
                BidirectionalIncrement = args.BidirectionalIncrement,
                UnidirectionalIncrement = args.UnidirectionalIncrement,
            });
        }
    }

    public static P.QuicClientConnectionOptions ToPlatform(QuicClientConnectionOptions o, QuicConnection owner)
    {
        var p = new P.QuicClientConnectionOptions
        {
            ClientAuthenticationOptions = o.ClientAuthenticationOptions,
            RemoteEndPoint = o.RemoteEndPoint,
            LocalEndPoint = o.LocalEndPoint,
        };
        CopyCommon(o, p, owner);
        return p;
    }

    public static P.QuicServerConnectionOptions ToPlatform(QuicServerConnectionOptions o, QuicConnection owner)
    {
        var p = new P.QuicServerConnectionOptions { ServerAuthenticationOptions = o.ServerAuthenticationOptions };
        CopyCommon(o, p, owner);
        return p;
    }
}
