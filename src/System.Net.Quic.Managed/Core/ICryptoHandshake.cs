using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// What the connection needs from the TLS 1.3 handshake (RFC 9001 §4): it feeds CRYPTO data in order per
/// level, and drains handshake bytes to send and traffic secrets. The TLS engine implements it; the core
/// never sees TLS records or messages.
/// </summary>
internal interface ICryptoHandshake : IDisposable
{
    /// <summary>Begins the handshake (a client produces its ClientHello). <paramref name="localTransportParameters"/> is the encoded extension body.</summary>
    void Start(ReadOnlySpan<byte> localTransportParameters, long nowUs);

    /// <summary>
    /// Handshake bytes received at <paramref name="level"/>, in order. Returns NoError, or the code to close with
    /// (CRYPTO_ERROR + alert, RFC 9001 §4.8, or another transport error) and a reason.
    /// </summary>
    TransportErrorCode Process(EncryptionLevel level, ReadOnlySpan<byte> data, long nowUs, out string? reason);

    /// <summary>Next handshake bytes to send at a level (appended to that level's CRYPTO stream).</summary>
    bool TryTakeOutgoing(out EncryptionLevel level, out byte[] data);

    /// <summary>Next traffic secret that became known.</summary>
    bool TryTakeSecret(out HandshakeSecret secret);

    /// <summary>True once this side sent its Finished and verified the peer's (RFC 9001 §4.1.1).</summary>
    bool IsComplete { get; }

    /// <summary>The peer's quic_transport_parameters extension body, once received; empty before.</summary>
    ReadOnlySpan<byte> PeerTransportParameters { get; }

    bool HasPeerTransportParameters { get; }

    TlsCipherSuite NegotiatedCipherSuite { get; }

    SslApplicationProtocol NegotiatedApplicationProtocol { get; }

    X509Certificate2? RemoteCertificate { get; }

    /// <summary>SNI: what the client asked for (server side) or sent (client side).</summary>
    string? ServerName { get; }

    /// <summary>
    /// The ClientHello random that keys NSS key log lines, but only when the application opted in to key logging for
    /// this connection; null otherwise (the default), and then the connection never exports a secret in events.
    /// </summary>
    byte[]? KeyLogClientRandom => null;

    /// <summary>True when the handshake resumed a session with a PSK from a ticket (RFC 8446 §2.2).</summary>
    bool IsResumed { get; }

    /// <summary>
    /// Client: the server accepted our 0-RTT data (early_data in EncryptedExtensions). Server: we accept the client's.
    /// Known once the peer's transport parameters are (RFC 9001 §4.6.1).
    /// </summary>
    bool EarlyDataAccepted { get; }

    /// <summary>Client: the next session ticket the server sent (NewSessionTicket, RFC 8446 §4.6.1), to resume a later connection.</summary>
    bool TryTakeSessionTicket(out TlsSessionTicket ticket);
}
