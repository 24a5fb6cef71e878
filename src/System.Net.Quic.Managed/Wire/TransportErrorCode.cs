namespace System.Net.Quic.Managed.Wire;

/// <summary>Transport error codes carried in CONNECTION_CLOSE (type 0x1c). RFC 9000 §20.1.</summary>
internal enum TransportErrorCode : ulong
{
    NoError = 0x00,
    InternalError = 0x01,
    ConnectionRefused = 0x02,
    FlowControlError = 0x03,
    StreamLimitError = 0x04,
    StreamStateError = 0x05,
    FinalSizeError = 0x06,
    FrameEncodingError = 0x07,
    TransportParameterError = 0x08,
    ConnectionIdLimitError = 0x09,
    ProtocolViolation = 0x0a,
    InvalidToken = 0x0b,
    ApplicationError = 0x0c,
    CryptoBufferExceeded = 0x0d,
    KeyUpdateError = 0x0e,
    AeadLimitReached = 0x0f,
    NoViablePath = 0x10,

    /// <summary>Compatible version negotiation failed its downgrade checks. RFC 9368 §10.2.</summary>
    VersionNegotiationError = 0x11,
    /// <summary>CRYPTO_ERROR base: the TLS alert is added to it (0x100 + alert). RFC 9001 §4.8.</summary>
    CryptoError = 0x100,
}
