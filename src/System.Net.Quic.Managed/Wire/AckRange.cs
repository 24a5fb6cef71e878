namespace System.Net.Quic.Managed.Wire;

/// <summary>
/// An inclusive range of packet numbers [Smallest, Largest], as carried by an ACK frame (RFC 9000 §19.3.1). Packet
/// numbers are below 2^62 (§17.1), so they fit a <see cref="long"/>; the ACK codec, the received-packet tracker and the
/// sent-packet tracker share this one type.
/// </summary>
internal readonly record struct AckRange(long Smallest, long Largest)
{
    public bool Contains(long packetNumber) => packetNumber >= Smallest && packetNumber <= Largest;
}
