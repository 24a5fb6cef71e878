namespace System.Net.Quic.Managed;

/// <summary>
/// Extension beyond System.Net.Quic: the fate of a datagram given to <see cref="QuicConnection.SendDatagramAsync"/>
/// (RFC 9221). Datagrams are never retransmitted: a lost one stays lost.
/// </summary>
public enum QuicDatagramSendResult
{
    /// <summary>The peer acknowledged the packet that carried the datagram.</summary>
    Acknowledged,

    /// <summary>The packet that carried the datagram was declared lost (RFC 9002 §6); it is not sent again.</summary>
    Lost,

    /// <summary>
    /// The datagram was never sent: the connection's send queue was full (the oldest waiting datagram is dropped to make
    /// room for a new one) or the datagram no longer fits the path.
    /// </summary>
    Dropped,
}
