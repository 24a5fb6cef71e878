using System.Net.Security;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed;

/// <summary>Options for a server (inbound) connection, returned by <see cref="QuicListenerOptions.ConnectionOptionsCallback"/>.</summary>
public sealed class QuicServerConnectionOptions : QuicConnectionOptions
{
    /// <summary>Initializes the options with the server defaults (100 bidirectional, 10 unidirectional inbound streams).</summary>
    public QuicServerConnectionOptions()
    {
        MaxInboundBidirectionalStreams = QuicDefaults.DefaultServerMaxInboundBidirectionalStreams;
        MaxInboundUnidirectionalStreams = QuicDefaults.DefaultServerMaxInboundUnidirectionalStreams;
    }

    /// <summary>TLS options: certificate or selection callback, ALPN list, client certificate policy. Mandatory.</summary>
    public SslServerAuthenticationOptions ServerAuthenticationOptions { get; set; } = null!;

    /// <summary>
    /// Extension beyond System.Net.Quic: accept 0-RTT data from clients resuming a session (RFC 9001 §4.6), so their first
    /// request arrives without waiting for the handshake. Off by default: 0-RTT data can be replayed (RFC 8446 §8), so turn
    /// it on only for applications whose early requests are idempotent. Session tickets for resumption are sent either way.
    /// </summary>
    public bool EnableEarlyData { get; set; }

    internal override void Validate(string argumentName)
    {
        base.Validate(argumentName);
        if (ServerAuthenticationOptions is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ServerAuthenticationOptions)}' must be specified and not null to accept a connection.");
        }
        if (ServerAuthenticationOptions.ServerCertificate is null && ServerAuthenticationOptions.ServerCertificateContext is null
            && ServerAuthenticationOptions.ServerCertificateSelectionCallback is null)
        {
            throw new ArgumentException("A server certificate, certificate context or selection callback is required.", argumentName);
        }
        // As msquic: the server connection's own ALPN list is mandatory (the listener's list only filters which
        // connections reach the callback).
        if (ServerAuthenticationOptions.ApplicationProtocols is null || ServerAuthenticationOptions.ApplicationProtocols.Count == 0)
        {
            throw new ArgumentException($"'{nameof(SslApplicationProtocol)}' must be specified and contain at least one item to establish the connection.", argumentName);
        }
        ManagedOptionsMapping.ToCipherSuites(ServerAuthenticationOptions.CipherSuitesPolicy);
    }
}
