namespace System.Net.Quic.Managed.Recovery;

/// <summary>State of one slot of the sent-packet ring.</summary>
internal enum SentPacketState : byte
{
    /// <summary>No packet was sent with this number (a deliberate skip, RFC 9000 §21.4).</summary>
    NotSent = 0,
    Outstanding = 1,
    Acked = 2,
    Lost = 3,
}
