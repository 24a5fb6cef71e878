using System.Net.Security;

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

    internal override void Validate(string argumentName)
    {
        base.Validate(argumentName);
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
    }
}
