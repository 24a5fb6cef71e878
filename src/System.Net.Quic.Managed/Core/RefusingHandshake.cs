using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Core;

/// <summary>
/// The TLS stand-in of a connection the server refuses: it fails on the ClientHello with the given code, so the
/// connection closes through its ordinary path and answers in the Initial space, which the client can open
/// (RFC 9000 §10.2.3). It holds no certificate and no key material.
/// </summary>
internal sealed class RefusingHandshake : ICryptoHandshake
{
    private readonly TransportErrorCode _code;
    private readonly string _reason;

    public RefusingHandshake(TransportErrorCode code, string reason)
    {
        _code = code;
        _reason = reason;
    }

    public void Start(ReadOnlySpan<byte> localTransportParameters, long nowUs)
    {
    }

    public TransportErrorCode Process(EncryptionLevel level, ReadOnlySpan<byte> data, long nowUs, out string? reason)
    {
        reason = _reason;
        return _code;
    }

    public bool TryTakeOutgoing(out EncryptionLevel level, out byte[] data)
    {
        level = default;
        data = null!;
        return false;
    }

    public bool TryTakeSecret(out HandshakeSecret secret)
    {
        secret = default!;
        return false;
    }

    public bool IsComplete => false;

    public ReadOnlySpan<byte> PeerTransportParameters => default;

    public bool HasPeerTransportParameters => false;

    public TlsCipherSuite NegotiatedCipherSuite => default;

    public SslApplicationProtocol NegotiatedApplicationProtocol => default;

    public X509Certificate2? RemoteCertificate => null;

    public string? ServerName => null;

    public bool IsResumed => false;

    public bool EarlyDataAccepted => false;

    public bool TryTakeSessionTicket(out TlsSessionTicket ticket)
    {
        ticket = null!;
        return false;
    }

    public void Dispose()
    {
    }
}
