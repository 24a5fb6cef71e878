using System.Collections.Generic;
using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;

namespace System.Net.Quic.Managed.Bridge;

/// <summary>Maps the public (System.Net.Quic-shaped) options onto the core's connection and TLS settings.</summary>
internal static class ManagedOptionsMapping
{
    /// <summary>Handshake timeout used for "infinite": large but far from overflowing now + timeout.</summary>
    private const long InfiniteHandshakeUs = 365L * 24 * 3600 * 1_000_000;

    /// <summary>How long a 0-RTT client's first flight waits for the application's first request (10 ms).</summary>
    public const long EarlyDataFirstFlightHoldUs = 10_000;

    // remote: the peer's address (the ceiling of path MTU discovery depends on it); maxReceivableDatagram: the largest
    // datagram the connection's socket receives whole, advertised as max_udp_payload_size; preferredAddress: a listener's
    // preferred address (RFC 9000 §9.6), advertised to its clients; null: none.
    public static ConnectionOptions ToConnectionOptions(QuicConnectionOptions o, IPEndPoint remote, string name, int maxReceivableDatagram,
        byte[]? earlyDataTransportParameters = null, IPEndPoint? preferredAddress = null)
    {
        QuicReceiveWindowSizes w = o.InitialReceiveWindowSizes;
        long keepAliveUs = o.KeepAliveInterval == Timeout.InfiniteTimeSpan || o.KeepAliveInterval <= TimeSpan.Zero ? 0 : o.KeepAliveInterval.Ticks / 10;
        long handshakeUs = o.HandshakeTimeoutUs == long.MaxValue ? InfiniteHandshakeUs : o.HandshakeTimeoutUs;
        var defaults = new StreamTableOptions();
        return new ConnectionOptions
        {
            EarlyDataTransportParameters = earlyDataTransportParameters,
            MaxUdpPayloadSize = (ulong)maxReceivableDatagram,
            // With 0-RTT the ClientHello waits (briefly) for the app's first request, so both leave in one datagram.
            EarlyDataFirstFlightHoldUs = earlyDataTransportParameters is null ? 0 : EarlyDataFirstFlightHoldUs,
            IdleTimeoutUs = o.IdleTimeoutUs,
            HandshakeTimeoutUs = handshakeUs,
            KeepAliveIntervalUs = keepAliveUs,
            Name = name,
            MaxDatagramFrameSize = (ulong)o.MaxDatagramFrameSize,
            Version = o is QuicClientConnectionOptions { ProtocolVersions: { Count: > 0 } offered } ? (uint)offered[0] : Wire.QuicVersion.V1,
            AvailableVersions = o is QuicClientConnectionOptions c ? QuicProtocolVersions.ToWire(c.ProtocolVersions) : null,
            DatagramReceiveQueueCapacity = o.DatagramReceiveQueueCapacity,
            EnableEcn = o.EnableEcn,
            MaxPathDatagramSize = QuicConnectionOptions.PathDatagramCeiling(o.MaxPathDatagramSize, remote.Address),
            CongestionControl = ToCongestionControl(o.CongestionControlAlgorithm),
            PreferredAddressV4 = preferredAddress is { AddressFamily: Sockets.AddressFamily.InterNetwork } ? preferredAddress : null,
            PreferredAddressV6 = preferredAddress is { AddressFamily: Sockets.AddressFamily.InterNetworkV6 } ? preferredAddress : null,
            DisablePreferredAddressMigration = o is QuicClientConnectionOptions { DisablePreferredAddressMigration: true },
            Streams = new StreamTableOptions
            {
                MaxStreamsBidi = o.MaxInboundBidirectionalStreams,
                MaxStreamsUni = o.MaxInboundUnidirectionalStreams,
                InitialMaxData = w.Connection,
                InitialMaxStreamDataBidiLocal = w.LocallyInitiatedBidirectionalStream,
                InitialMaxStreamDataBidiRemote = w.RemotelyInitiatedBidirectionalStream,
                InitialMaxStreamDataUni = w.UnidirectionalStream,
                // The initial windows are where auto-tuning starts; it may grow them up to these bounds.
                MaxConnectionReceiveWindow = Math.Max(defaults.MaxConnectionReceiveWindow, w.Connection),
                MaxStreamReceiveWindow = Math.Max(defaults.MaxStreamReceiveWindow, Math.Max(w.LocallyInitiatedBidirectionalStream,
                    Math.Max(w.RemotelyInitiatedBidirectionalStream, w.UnidirectionalStream))),
            },
        };
    }

    /// <summary>The core's controller for the public choice (validated before: undefined values do not get here).</summary>
    public static CongestionControlAlgorithm ToCongestionControl(QuicCongestionControlAlgorithm algorithm) => algorithm switch
    {
        QuicCongestionControlAlgorithm.NewReno => CongestionControlAlgorithm.NewReno,
        QuicCongestionControlAlgorithm.Bbr => CongestionControlAlgorithm.Bbr,
        _ => CongestionControlAlgorithm.Cubic,
    };

    public static void RequireTls13(SslProtocols enabled, string argumentName)
    {
        // QUIC is TLS 1.3 only (RFC 9001 §4.2): an explicit protocol list must include it.
        if (enabled != SslProtocols.None && (enabled & SslProtocols.Tls13) == 0)
        {
            throw new ArgumentException("QUIC requires TLS 1.3; 'EnabledSslProtocols' does not allow it.", argumentName);
        }
    }

    /// <summary>The message System.Net.Quic gives for a cipher suite policy with no suite QUIC can use.</summary>
    public const string NoQuicCipherSuiteMessage = "CipherSuitePolicy must specify at least one cipher supported by QUIC.";

    /// <summary>
    /// The TLS 1.3 AEAD suites QUIC can use (RFC 9001 §5.3) that <paramref name="policy"/> allows, in the policy's order;
    /// null (the defaults) without a policy. A policy allowing none of them is an <see cref="ArgumentException"/>, as with
    /// msquic. Throws <see cref="PlatformNotSupportedException"/> where .NET does not support cipher suite policies.
    /// </summary>
    public static TlsCipherSuite[]? ToCipherSuites(CipherSuitesPolicy? policy)
    {
        if (policy is null) return null;
        // .NET cannot even construct a policy on Windows; the guard keeps the platform analyzer informed.
        if (OperatingSystem.IsWindows()) throw new PlatformNotSupportedException("CipherSuitesPolicy is not supported on this platform.");
        var suites = new List<TlsCipherSuite>(3);
        foreach (TlsCipherSuite suite in policy.AllowedCipherSuites)
        {
            if (suite is TlsCipherSuite.TLS_AES_128_GCM_SHA256 or TlsCipherSuite.TLS_AES_256_GCM_SHA384 or TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256
                && !suites.Contains(suite))
            {
                suites.Add(suite);
            }
        }
        if (suites.Count == 0) throw new ArgumentException(NoQuicCipherSuiteMessage, nameof(SslClientAuthenticationOptions.CipherSuitesPolicy));
        return suites.ToArray();
    }

    public static TlsHandshakeOptions ToClientTls(SslClientAuthenticationOptions o, string? targetHost, QuicConnection owner)
    {
        var tls = new TlsHandshakeOptions
        {
            ServerName = string.IsNullOrEmpty(targetHost) ? null : targetHost,
            ApplicationProtocols = new List<SslApplicationProtocol>(o.ApplicationProtocols!),
            KeyLog = QuicManagedDiagnostics.KeyLogSink,
            CertificateChainPolicy = o.CertificateChainPolicy,
            RemoteCertificateValidation = WrapValidation(o.RemoteCertificateValidationCallback, owner),
        };
        // The client offers only the suites the policy allows, in its order of preference.
        if (ToCipherSuites(o.CipherSuitesPolicy) is { } suites) tls.CipherSuites = suites;
        X509Certificate2? clientCertificate = o.ClientCertificateContext?.TargetCertificate;
        if (clientCertificate is null && o.ClientCertificates is { Count: > 0 })
        {
            foreach (X509Certificate c in o.ClientCertificates)
            {
                if (c is X509Certificate2 { HasPrivateKey: true } c2)
                {
                    clientCertificate = c2;
                    break;
                }
            }
        }
        if (clientCertificate is null && o.LocalCertificateSelectionCallback is not null)
        {
            clientCertificate = o.LocalCertificateSelectionCallback(owner, targetHost ?? "", o.ClientCertificates ?? new X509CertificateCollection(), null, Array.Empty<string>()) as X509Certificate2;
        }
        tls.Certificate = clientCertificate;
        if (o.ClientCertificateContext is { } context) tls.CertificateChain = ToCollection(context.IntermediateCertificates);
        if (o.CertificateChainPolicy is null && o.CertificateRevocationCheckMode != X509RevocationMode.NoCheck)
        {
            tls.CertificateChainPolicy = new X509ChainPolicy { RevocationMode = o.CertificateRevocationCheckMode };
        }
        return tls;
    }

    public static TlsHandshakeOptions ToServerTls(SslServerAuthenticationOptions o, List<SslApplicationProtocol> listenerProtocols, QuicConnection owner)
    {
        var tls = new TlsHandshakeOptions
        {
            ApplicationProtocols = new List<SslApplicationProtocol>(o.ApplicationProtocols is { Count: > 0 } own ? own : listenerProtocols),
            KeyLog = QuicManagedDiagnostics.KeyLogSink,
            CertificateChainPolicy = o.CertificateChainPolicy,
            RemoteCertificateValidation = WrapValidation(o.RemoteCertificateValidationCallback, owner),
            RequestClientCertificate = o.ClientCertificateRequired,
            // SslStream semantics: a required-but-missing certificate is a policy error the callback may accept.
            RequireClientCertificate = o.ClientCertificateRequired && o.RemoteCertificateValidationCallback is null,
        };
        // The server picks the first suite of its policy that the client offered.
        if (ToCipherSuites(o.CipherSuitesPolicy) is { } suites) tls.CipherSuites = suites;
        if (o.ServerCertificateContext is { } context)
        {
            tls.Certificate = context.TargetCertificate;
            tls.CertificateChain = ToCollection(context.IntermediateCertificates);
        }
        else if (o.ServerCertificate is X509Certificate2 certificate)
        {
            tls.Certificate = certificate;
        }
        if (o.ServerCertificateSelectionCallback is { } select)
        {
            tls.ServerCertificateSelector = sni =>
            {
                try
                {
                    // System.Net.Quic hands the callback "" when the client sent no SNI; a null answer is the app's error.
                    if (select(owner, sni ?? "") is X509Certificate2 selected) return selected;
                    RecordCallbackFailure(owner, new ArgumentException("The ServerCertificateSelectionCallback returned no certificate.", nameof(SslServerAuthenticationOptions.ServerCertificateSelectionCallback)));
                }
                catch (Exception ex)
                {
                    RecordCallbackFailure(owner, QuicExceptionFactory.CallbackError(ex));
                }
                return null;
            };
        }
        return tls;
    }

    private static X509Certificate2Collection? ToCollection(IReadOnlyCollection<X509Certificate2>? certificates)
    {
        if (certificates is null || certificates.Count == 0) return null;
        var collection = new X509Certificate2Collection();
        foreach (X509Certificate2 c in certificates) collection.Add(c);
        return collection;
    }

    private static RemoteCertificateValidationCallback? WrapValidation(RemoteCertificateValidationCallback? callback, QuicConnection owner)
    {
        // System.Net.Quic passes the connection as the sender; the TLS engine passes null. A callback that throws fails
        // the handshake (the peer gets a bad_certificate alert) and the app sees its exception, not a hang.
        if (callback is null) return null;
        return (_, certificate, chain, errors) =>
        {
            try
            {
                return callback(owner, certificate, chain, errors);
            }
            catch (Exception ex)
            {
                RecordCallbackFailure(owner, QuicExceptionFactory.CallbackError(ex));
                return false;
            }
        };
    }

    private static void RecordCallbackFailure(QuicConnection owner, Exception failure)
        => (owner.Impl as ManagedConnection)?.RecordCallbackFailure(failure);
}
