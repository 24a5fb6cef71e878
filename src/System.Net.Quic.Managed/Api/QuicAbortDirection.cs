namespace System.Net.Quic.Managed;

/// <summary>Which side(s) of a stream <c>QuicStream.Abort</c> aborts. Values match System.Net.Quic.QuicAbortDirection.</summary>
[Flags]
public enum QuicAbortDirection
{
    /// <summary>Abort the read side: sends STOP_SENDING (RFC 9000 §19.5).</summary>
    Read = 1,

    /// <summary>Abort the write side: sends RESET_STREAM (RFC 9000 §19.4).</summary>
    Write = 2,

    /// <summary>Abort both sides.</summary>
    Both = Read | Write,
}
