namespace System.Net.Quic.Managed.Streams;

/// <summary>Stream-scoped frames a peer can send, for the per-frame stream-state checks of RFC 9000 §19.</summary>
internal enum StreamFrameKind
{
    /// <summary>STREAM (0x08-0x0f), RFC 9000 §19.8.</summary>
    Stream,

    /// <summary>RESET_STREAM (0x04), RFC 9000 §19.4.</summary>
    ResetStream,

    /// <summary>STOP_SENDING (0x05), RFC 9000 §19.5.</summary>
    StopSending,

    /// <summary>MAX_STREAM_DATA (0x11), RFC 9000 §19.10.</summary>
    MaxStreamData,

    /// <summary>STREAM_DATA_BLOCKED (0x15), RFC 9000 §19.13.</summary>
    StreamDataBlocked,
}
