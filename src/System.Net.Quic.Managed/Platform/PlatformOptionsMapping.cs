#pragma warning disable CA1416 // Reached only when PlatformQuic.IsSupported (Linux, Windows, macOS with libmsquic).
using System.Net.Security;
using P = System.Net.Quic;

namespace System.Net.Quic.Managed.Platform;

/// <summary>Our options classes as System.Net.Quic's, for the msquic provider.</summary>
internal static class PlatformOptionsMapping
{
    private static void CopyCommon(QuicConnectionOptions from, P.QuicConnectionOptions to, QuicConnection owner)
    {
        if (from.MaxDatagramFrameSize > 0) throw new NotSupportedException(QuicConnectionImpl.DatagramsNotSupportedMessage);
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
            ClientAuthenticationOptions = WithOwnerAsSender(o.ClientAuthenticationOptions, owner),
            RemoteEndPoint = o.RemoteEndPoint,
            LocalEndPoint = o.LocalEndPoint,
        };
        CopyCommon(o, p, owner);
        return p;
    }

    public static P.QuicServerConnectionOptions ToPlatform(QuicServerConnectionOptions o, QuicConnection owner)
    {
        var p = new P.QuicServerConnectionOptions { ServerAuthenticationOptions = WithOwnerAsSender(o.ServerAuthenticationOptions, owner) };
        CopyCommon(o, p, owner);
        return p;
    }

    /// <summary>
    /// A copy whose callbacks receive our public connection as their sender (System.Net.Quic would pass its own
    /// connection object, which the app never sees); the app's options object is left as it is.
    /// </summary>
    private static SslClientAuthenticationOptions WithOwnerAsSender(SslClientAuthenticationOptions o, QuicConnection owner)
    {
        if (o.RemoteCertificateValidationCallback is null && o.LocalCertificateSelectionCallback is null) return o;
        RemoteCertificateValidationCallback? validate = o.RemoteCertificateValidationCallback;
        LocalCertificateSelectionCallback? select = o.LocalCertificateSelectionCallback;
        return new SslClientAuthenticationOptions
        {
            AllowRenegotiation = o.AllowRenegotiation,
            AllowTlsResume = o.AllowTlsResume,
            ApplicationProtocols = o.ApplicationProtocols,
            CertificateChainPolicy = o.CertificateChainPolicy,
            CertificateRevocationCheckMode = o.CertificateRevocationCheckMode,
            CipherSuitesPolicy = o.CipherSuitesPolicy,
            ClientCertificateContext = o.ClientCertificateContext,
            ClientCertificates = o.ClientCertificates,
            EnabledSslProtocols = o.EnabledSslProtocols,
            EncryptionPolicy = o.EncryptionPolicy,
            TargetHost = o.TargetHost,
            RemoteCertificateValidationCallback = validate is null ? null : (_, certificate, chain, errors) => validate(owner, certificate, chain, errors),
            LocalCertificateSelectionCallback = select is null ? null : (_, host, local, remote, issuers) => select(owner, host, local, remote, issuers),
        };
    }

    private static SslServerAuthenticationOptions WithOwnerAsSender(SslServerAuthenticationOptions o, QuicConnection owner)
    {
        if (o.RemoteCertificateValidationCallback is null && o.ServerCertificateSelectionCallback is null) return o;
        RemoteCertificateValidationCallback? validate = o.RemoteCertificateValidationCallback;
        ServerCertificateSelectionCallback? select = o.ServerCertificateSelectionCallback;
        return new SslServerAuthenticationOptions
        {
            AllowRenegotiation = o.AllowRenegotiation,
            AllowTlsResume = o.AllowTlsResume,
            ApplicationProtocols = o.ApplicationProtocols,
            CertificateChainPolicy = o.CertificateChainPolicy,
            CertificateRevocationCheckMode = o.CertificateRevocationCheckMode,
            CipherSuitesPolicy = o.CipherSuitesPolicy,
            ClientCertificateRequired = o.ClientCertificateRequired,
            EnabledSslProtocols = o.EnabledSslProtocols,
            EncryptionPolicy = o.EncryptionPolicy,
            ServerCertificate = o.ServerCertificate,
            ServerCertificateContext = o.ServerCertificateContext,
            RemoteCertificateValidationCallback = validate is null ? null : (_, certificate, chain, errors) => validate(owner, certificate, chain, errors),
            ServerCertificateSelectionCallback = select is null ? null : (_, host) => select(owner, host),
        };
    }
}
