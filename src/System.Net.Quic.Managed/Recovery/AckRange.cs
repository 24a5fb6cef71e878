namespace System.Net.Quic.Managed.Recovery;

/// <summary>An inclusive range of packet numbers [Smallest, Largest], as carried by an ACK frame. RFC 9000 §19.3.1.</summary>
internal readonly record struct AckRange(long Smallest, long Largest)
{
    public bool Contains(long packetNumber) => packetNumber >= Smallest && packetNumber <= Largest;
}
