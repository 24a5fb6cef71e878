namespace System.Net.Quic.Managed;

/// <summary>Defines the various error conditions for QUIC operations. Values match System.Net.Quic.QuicError.</summary>
public enum QuicError
{
    /// <summary>No error.</summary>
    Success = 0,

    /// <summary>An internal implementation error has occurred.</summary>
    InternalError = 1,

    /// <summary>The connection was aborted by the peer. <see cref="QuicException.ApplicationErrorCode"/> holds the peer's code.</summary>
    ConnectionAborted = 2,

    /// <summary>The stream was aborted by the peer. <see cref="QuicException.ApplicationErrorCode"/> holds the peer's code.</summary>
    StreamAborted = 3,

    /// <summary>The connection timed out waiting for a response from the peer (including the handshake timeout).</summary>
    ConnectionTimeout = 6,

    /// <summary>The server refused the connection.</summary>
    ConnectionRefused = 8,

    /// <summary>A version negotiation error was encountered.</summary>
    VersionNegotiationError = 9,

    /// <summary>The connection timed out from inactivity.</summary>
    ConnectionIdle = 10,

    /// <summary>The operation has been aborted locally.</summary>
    OperationAborted = 12,

    /// <summary>Another QUIC listener is already listening on one of the requested application protocols on the same port.</summary>
    AlpnInUse = 13,

    /// <summary>A QUIC protocol error was encountered. <see cref="QuicException.TransportErrorCode"/> holds the code.</summary>
    TransportError = 14,

    /// <summary>An error occurred in a user-provided callback.</summary>
    CallbackError = 15,
}
