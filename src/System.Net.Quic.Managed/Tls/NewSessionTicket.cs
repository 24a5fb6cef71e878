namespace System.Net.Quic.Managed.Tls;

/// <summary>NewSessionTicket (RFC 8446 §4.6.1).</summary>
internal sealed class NewSessionTicket
{
    public uint LifetimeSeconds;
    public uint AgeAdd;
    public byte[] Nonce = Array.Empty<byte>();
    public byte[] Ticket = Array.Empty<byte>();
    /// <summary>early_data max_early_data_size, or null when 0-RTT is not allowed. RFC 9001 §4.6.1 requires 0xffffffff when present.</summary>
    public uint? MaxEarlyDataSize;

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.NewSessionTicket);
        w.WriteUInt32(LifetimeSeconds);
        w.WriteUInt32(AgeAdd);
        w.WriteVector8(Nonce);
        w.WriteVector16(Ticket);
        int exts = w.BeginVector(2);
        if (MaxEarlyDataSize is uint max)
        {
            w.WriteUInt16((ushort)ExtensionType.EarlyData);
            w.WriteUInt16(4);
            w.WriteUInt32(max);
        }
        w.EndVector(exts, 2);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out NewSessionTicket ticket)
    {
        ticket = new NewSessionTicket();
        var r = new TlsReader(body);
        if (!r.TryReadUInt32(out ticket.LifetimeSeconds) || !r.TryReadUInt32(out ticket.AgeAdd)) return TlsAlert.DecodeError;
        if (!r.TryReadVector8(out ReadOnlySpan<byte> nonce) || !r.TryReadVector16(out ReadOnlySpan<byte> t) || t.Length == 0) return TlsAlert.DecodeError;
        if (!r.TryReadVector16(out ReadOnlySpan<byte> extensions) || !r.IsEmpty) return TlsAlert.DecodeError;
        // RFC 8446 §4.6.1: lifetimes over 7 days MUST NOT be used.
        if (ticket.LifetimeSeconds > 604800) return TlsAlert.IllegalParameter;
        ticket.Nonce = nonce.ToArray();
        ticket.Ticket = t.ToArray();
        var er = new TlsReader(extensions);
        var seen = new ExtensionSet();
        while (!er.IsEmpty)
        {
            if (!er.TryReadUInt16(out ushort type) || !er.TryReadVector16(out ReadOnlySpan<byte> data)) return TlsAlert.DecodeError;
            if (!seen.TryAdd(type)) return TlsAlert.IllegalParameter;
            if (type == (ushort)ExtensionType.EarlyData)
            {
                var x = new TlsReader(data);
                if (!x.TryReadUInt32(out uint max) || !x.IsEmpty) return TlsAlert.DecodeError;
                ticket.MaxEarlyDataSize = max;
            }
        }
        return null;
    }
}
