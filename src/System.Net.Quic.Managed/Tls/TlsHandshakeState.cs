namespace System.Net.Quic.Managed.Tls;

/// <summary>Handshake state machine states (RFC 8446 Appendix A).</summary>
internal enum TlsHandshakeState
{
    Start,
    ClientWaitServerHello,
    ClientWaitEncryptedExtensions,
    ClientWaitCertificateOrRequest,
    ClientWaitCertificate,
    ClientWaitCertificateVerify,
    ClientWaitFinished,
    ServerWaitClientHello,
    ServerWaitSecondClientHello,
    ServerWaitClientCertificate,
    ServerWaitClientCertificateVerify,
    ServerWaitClientFinished,
    Connected,
    Failed,
}
