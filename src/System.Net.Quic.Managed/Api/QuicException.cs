using System.IO;

namespace System.Net.Quic.Managed;

/// <summary>The exception that is thrown when a QUIC operation fails. Mirrors System.Net.Quic.QuicException.</summary>
public sealed class QuicException : IOException
{
    /// <summary>Initializes a new instance of the <see cref="QuicException"/> class.</summary>
    /// <param name="error">The error associated with the exception.</param>
    /// <param name="applicationErrorCode">The application protocol error code associated with the error.</param>
    /// <param name="message">The message for the exception.</param>
    public QuicException(QuicError error, long? applicationErrorCode, string message)
        : this(error, applicationErrorCode, null, message, null)
    {
    }

    internal QuicException(QuicError error, long? applicationErrorCode, long? transportErrorCode, string message, Exception? innerException)
        : base(message, innerException)
    {
        QuicError = error;
        ApplicationErrorCode = applicationErrorCode;
        TransportErrorCode = transportErrorCode;
    }

    /// <summary>Gets the error which is associated with this exception.</summary>
    public QuicError QuicError { get; }

    /// <summary>
    /// The application protocol error code associated with the error. Set when <see cref="QuicError"/> is
    /// <see cref="QuicError.ConnectionAborted"/> or <see cref="QuicError.StreamAborted"/>.
    /// </summary>
    public long? ApplicationErrorCode { get; }

    /// <summary>The transport protocol error code associated with the error (RFC 9000 §20.1). Set when <see cref="QuicError"/> is <see cref="QuicError.TransportError"/>.</summary>
    public long? TransportErrorCode { get; }
}
