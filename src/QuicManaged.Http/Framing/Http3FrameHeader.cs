namespace QuicManaged.Http.Framing;

/// <summary>A frame's type and payload length (RFC 9114 §7.1).</summary>
internal readonly record struct Http3FrameHeader(long Type, long Length);
