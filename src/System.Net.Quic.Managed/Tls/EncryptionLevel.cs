namespace System.Net.Quic.Managed.Tls;

/// <summary>QUIC encryption levels that carry CRYPTO frames (RFC 9001 §4.1.4).</summary>
internal enum EncryptionLevel
{
    Initial = 0,
    /// <summary>0-RTT: never carries CRYPTO frames, only its keys are produced (RFC 9001 §4.1.4).</summary>
    EarlyData = 1,
    Handshake = 2,
    OneRtt = 3,
}
