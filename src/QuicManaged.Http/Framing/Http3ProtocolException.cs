namespace QuicManaged.Http.Framing;

/// <summary>An HTTP/3 or QPACK protocol violation, carrying the error code to close the stream or connection with.</summary>
internal sealed class Http3ProtocolException : Exception
{
    public Http3ProtocolException(Http3ErrorCode errorCode, string message)
        : base($"{errorCode} (0x{(long)errorCode:x}): {message}")
    {
        ErrorCode = errorCode;
    }

    public Http3ErrorCode ErrorCode { get; }
}
