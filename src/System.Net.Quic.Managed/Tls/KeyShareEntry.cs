namespace System.Net.Quic.Managed.Tls;

/// <summary>KeyShareEntry (RFC 8446 §4.2.8).</summary>
internal readonly struct KeyShareEntry
{
    public KeyShareEntry(ushort group, byte[] keyExchange)
    {
        Group = group;
        KeyExchange = keyExchange;
    }

    public ushort Group { get; }

    public byte[] KeyExchange { get; }
}
