using System.Collections.Generic;
using System.Net.Security;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed;

/// <summary>Options for a client (outbound) connection. Mirrors System.Net.Quic.QuicClientConnectionOptions.</summary>
public sealed class QuicClientConnectionOptions : QuicConnectionOptions
{
    /// <summary>Initializes the options with the client defaults (no inbound streams).</summary>
    public QuicClientConnectionOptions()
    {
        MaxInboundBidirectionalStreams = QuicDefaults.DefaultClientMaxInboundBidirectionalStreams;
        MaxInboundUnidirectionalStreams = QuicDefaults.DefaultClientMaxInboundUnidirectionalStreams;
    }

    /// <summary>TLS options: target host, ALPN list (mandatory), certificate validation, client certificate. Mandatory.</summary>
    public SslClientAuthenticationOptions ClientAuthenticationOptions { get; set; } = null!;

    /// <summary>The endpoint to connect to: an <see cref="IPEndPoint"/>, or a <see cref="DnsEndPoint"/> resolved before connecting. Mandatory.</summary>
    public EndPoint RemoteEndPoint { get; set; } = null!;

    /// <summary>The optional local endpoint to bind to.</summary>
    public IPEndPoint? LocalEndPoint { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: where tickets from the server are kept and where this connection takes one to
    /// resume a session (RFC 8446 §2.2). Null (the default): every connection does a full handshake. Ignored by the msquic provider.
    /// </summary>
    public QuicSessionTicketStore? SessionTicketStore { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: when the <see cref="SessionTicketStore"/> holds a ticket that allows it, send
    /// application data as 0-RTT (RFC 9001 §4.6): <see cref="QuicConnection.ConnectAsync(QuicClientConnectionOptions, System.Threading.CancellationToken)"/>
    /// then completes as soon as the first flight is out, and streams opened and written before the handshake completes
    /// travel in 0-RTT packets. 0-RTT data can be replayed by an attacker (RFC 8446 §8): send only idempotent requests.
    /// Data the server refuses is sent again after the handshake, transparently; <see cref="QuicConnection.IsEarlyDataAccepted"/>
    /// tells which happened once <see cref="QuicConnection.WaitForHandshakeAsync"/> completed.
    /// </summary>
    public bool EnableEarlyData { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic: the QUIC versions the client accepts, most preferred first. The first Initial
    /// is sent in the first of them; all are listed in version_information (RFC 9368), so a server may answer in any
    /// other listed version (compatible version negotiation; <see cref="QuicConnection.NegotiatedProtocolVersion"/> tells
    /// which was used). Null (the default): version 1 only. Validated: not empty, no duplicates. Managed provider only:
    /// with the msquic provider ConnectAsync throws <see cref="PlatformNotSupportedException"/> when set.
    /// </summary>
    public IList<QuicProtocolVersion>? ProtocolVersions { get; set; }

    /// <summary>
    /// Extension beyond System.Net.Quic (RFC 9000 §9.6): when false (the default) and the server advertises a preferred
    /// address of the connection's address family, the client validates a path to it after the handshake and, if it answers,
    /// moves the connection there (<see cref="QuicConnection.RemoteEndPoint"/> then names it); true ignores the preferred address.
    /// Managed provider only: the msquic provider accepts the setting and ignores it.
    /// </summary>
    public bool DisablePreferredAddressMigration { get; set; }

    internal override void Validate(string argumentName)
    {
        base.Validate(argumentName);
        QuicProtocolVersions.Validate(ProtocolVersions, argumentName, nameof(ProtocolVersions));
        if (EnableEarlyData && SessionTicketStore is null)
        {
            throw new ArgumentException($"'{nameof(EnableEarlyData)}' needs a '{nameof(SessionTicketStore)}' to take tickets from.", argumentName);
        }
        if (ClientAuthenticationOptions is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(ClientAuthenticationOptions)}' must be specified and not null to open a connection.");
        }
        if (RemoteEndPoint is null)
        {
            throw new ArgumentNullException(argumentName, $"'{nameof(RemoteEndPoint)}' must be specified and not null to open a connection.");
        }
        if (RemoteEndPoint is not (IPEndPoint or DnsEndPoint))
        {
            throw new ArgumentException($"'{nameof(RemoteEndPoint)}' must be an IPEndPoint or a DnsEndPoint.", argumentName);
        }
        if (ClientAuthenticationOptions.ApplicationProtocols is null || ClientAuthenticationOptions.ApplicationProtocols.Count == 0)
        {
            throw new ArgumentException("QUIC requires at least one application protocol in 'ClientAuthenticationOptions.ApplicationProtocols'.", argumentName);
        }
        ManagedOptionsMapping.ToCipherSuites(ClientAuthenticationOptions.CipherSuitesPolicy);
    }
}
