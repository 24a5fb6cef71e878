using System.Collections.Generic;
using System.Net.Quic.Managed.Crypto;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

/// <summary>Configuration of one <see cref="TlsHandshake"/> (client or server).</summary>
internal sealed class TlsHandshakeOptions
{
    /// <summary>Cipher suites in preference order (the server's order decides).</summary>
    public TlsCipherSuite[] CipherSuites { get; set; } =
    [
        TlsCipherSuite.TLS_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
    ];

    /// <summary>Key exchange groups in preference order.</summary>
    public NamedGroup[] Groups { get; set; } = [NamedGroup.X25519, NamedGroup.Secp256r1, NamedGroup.Secp384r1];

    /// <summary>Client: groups to send key shares for in the first ClientHello (default: the first of <see cref="Groups"/>).</summary>
    public NamedGroup[]? KeyShareGroups { get; set; }

    /// <summary>Signature schemes accepted/used in CertificateVerify, in preference order.</summary>
    public SignatureScheme[] SignatureSchemes { get; set; } =
    [
        SignatureScheme.EcdsaSecp256r1Sha256,
        SignatureScheme.EcdsaSecp384r1Sha384,
        SignatureScheme.RsaPssRsaeSha256,
        SignatureScheme.RsaPssRsaeSha384,
        SignatureScheme.RsaPssRsaeSha512,
    ];

    /// <summary>ALPN protocols (RFC 7301). Client: offered in order. Server: the first of this list the client offered wins.</summary>
    public List<SslApplicationProtocol> ApplicationProtocols { get; set; } = new();

    /// <summary>Client: SNI to send and the name the server certificate must match.</summary>
    public string? ServerName { get; set; }

    /// <summary>Our encoded quic_transport_parameters (RFC 9001 §8.2); null sends none (TLS-over-TCP tests only).</summary>
    public byte[]? LocalTransportParameters { get; set; }

    /// <summary>RFC 9001 §8.2: a peer omitting quic_transport_parameters fails with missing_extension. Only TLS-over-TCP tests turn this off.</summary>
    public bool RequirePeerTransportParameters { get; set; } = true;

    /// <summary>Server certificate (with private key), or client certificate for mutual TLS.</summary>
    public X509Certificate2? Certificate { get; set; }

    /// <summary>Intermediates sent after <see cref="Certificate"/>.</summary>
    public X509Certificate2Collection? CertificateChain { get; set; }

    /// <summary>Server: picks a certificate by SNI (argument may be null); overrides <see cref="Certificate"/> when it returns non-null.</summary>
    public Func<string?, X509Certificate2?>? ServerCertificateSelector { get; set; }

    /// <summary>Server: send a CertificateRequest.</summary>
    public bool RequestClientCertificate { get; set; }

    /// <summary>Server: fail with certificate_required if the client sends no certificate (unless the callback accepts).</summary>
    public bool RequireClientCertificate { get; set; }

    /// <summary>Overrides the default validation outcome, like SslStream's callback. The sender argument is null.</summary>
    public RemoteCertificateValidationCallback? RemoteCertificateValidation { get; set; }

    /// <summary>Chain policy (trust store, revocation). Default: system trust, no revocation check, no downloads.</summary>
    public X509ChainPolicy? CertificateChainPolicy { get; set; }

    /// <summary>
    /// Receives NSS key log lines (SSLKEYLOGFILE format: label, client random, secret in hex) as secrets become known.
    /// Null (the default) logs nothing; the public API sets it only when the application opted in to key logging.
    /// </summary>
    public Action<string>? KeyLog { get; set; }

    /// <summary>Randomness for client/server random, key shares, ticket data.</summary>
    public IRandomSource Random { get; set; } = SecureRandomSource.Instance;

    /// <summary>Server: always answer the first ClientHello with a HelloRetryRequest carrying a cookie (tests, address validation).</summary>
    public bool ServerForceHelloRetryWithCookie { get; set; }

    /// <summary>Maximum bytes buffered per encryption level for an incomplete handshake message (CRYPTO_BUFFER_EXCEEDED beyond).</summary>
    public int MaxBufferedCryptoBytes { get; set; } = 64 * 1024;

    /// <summary>Server: 32-byte AES-GCM key that seals session tickets (RFC 8446 §4.6.1). Null: no tickets are issued or accepted.</summary>
    public byte[]? SessionTicketKey { get; set; }

    /// <summary>Server: ticket_lifetime in seconds (at most 604800, RFC 8446 §4.6.1).</summary>
    public uint TicketLifetimeSeconds { get; set; } = 7200;

    /// <summary>Server: issue tickets that allow 0-RTT and accept 0-RTT on resumption (RFC 9001 §4.6).</summary>
    public bool EnableEarlyData { get; set; }

    /// <summary>Server: how far the client's reported ticket age may be from the server's view before 0-RTT is refused (RFC 8446 §8.3).</summary>
    public long MaxTicketAgeSkewUs { get; set; } = 10_000_000;

    /// <summary>Client: a ticket from an earlier connection to resume with (psk_dhe_ke only).</summary>
    public TlsSessionTicket? SessionTicket { get; set; }

    /// <summary>Client: offer 0-RTT when <see cref="SessionTicket"/> allows it.</summary>
    public bool OfferEarlyData { get; set; }
}
