namespace System.Net.Quic.Managed.Streams;

/// <summary>States of the sending part of a stream. RFC 9000 §3.1, Figure 2.</summary>
internal enum SendStreamState
{
    Ready,
    Send,
    DataSent,
    DataRecvd,
    ResetSent,
    ResetRecvd,
}
