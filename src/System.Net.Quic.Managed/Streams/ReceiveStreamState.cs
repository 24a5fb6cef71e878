namespace System.Net.Quic.Managed.Streams;

/// <summary>States of the receiving part of a stream. RFC 9000 §3.2, Figure 3.</summary>
internal enum ReceiveStreamState
{
    Recv,
    SizeKnown,
    DataRecvd,
    DataRead,
    ResetRecvd,
    ResetRead,
}
