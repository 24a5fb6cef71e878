namespace QuicManaged.Http;

/// <summary>The server did not process the request (GOAWAY below its stream id, or H3_REQUEST_REJECTED): it may be sent again.</summary>
internal sealed class Http3RetryException(string message, Exception? inner = null) : Exception(message, inner);
