namespace System.Net.Quic.Managed.Recovery;

/// <summary>The three packet number spaces. RFC 9000 §12.3. Values index per-space arrays.</summary>
internal enum PacketNumberSpace : byte
{
    Initial = 0,
    Handshake = 1,
    ApplicationData = 2,
}
