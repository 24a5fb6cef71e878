namespace QuicManaged.Interop.Http3;

/// <summary>The outcome of one request: the final status and the number of body bytes received.</summary>
internal readonly record struct Http3Response(int StatusCode, long BodyLength);
