namespace System.Net.Quic.Managed.Tls;

/// <summary>One offered PSK identity (RFC 8446 §4.2.11).</summary>
internal readonly struct PskIdentity
{
    public PskIdentity(byte[] identity, uint obfuscatedTicketAge)
    {
        Identity = identity;
        ObfuscatedTicketAge = obfuscatedTicketAge;
    }

    public byte[] Identity { get; }

    public uint ObfuscatedTicketAge { get; }
}
