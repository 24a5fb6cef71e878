using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tls;

/// <summary>Alert to QUIC error code mapping.</summary>
internal static class TlsAlertExtensions
{
    /// <summary>RFC 9001 §4.8: a TLS alert becomes the QUIC error CRYPTO_ERROR (0x100) + alert description.</summary>
    public static TransportErrorCode ToTransportErrorCode(this TlsAlert alert)
        => TransportErrorCode.CryptoError + (byte)alert;
}
