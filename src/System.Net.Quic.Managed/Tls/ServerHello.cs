namespace System.Net.Quic.Managed.Tls;

/// <summary>ServerHello and HelloRetryRequest (RFC 8446 §4.1.3, §4.1.4).</summary>
internal sealed class ServerHello
{
    /// <summary>RFC 8446 §4.1.3: the Random of a HelloRetryRequest is SHA-256("HelloRetryRequest").</summary>
    public static ReadOnlySpan<byte> HelloRetryRequestRandom =>
    [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ];

    public byte[] Random = new byte[32];
    public byte[] LegacySessionIdEcho = Array.Empty<byte>();
    public ushort CipherSuite;
    public ushort SelectedVersion;
    public ushort KeyShareGroup;
    /// <summary>Server key share (ServerHello only; null in a HelloRetryRequest).</summary>
    public byte[]? KeyShare;
    public bool HasKeyShare;
    public byte[]? Cookie;
    /// <summary>Selected PSK identity index, or -1.</summary>
    public int SelectedIdentity = -1;

    public bool IsHelloRetryRequest => Random.AsSpan().SequenceEqual(HelloRetryRequestRandom);

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.ServerHello);
        w.WriteUInt16(ClientHello.LegacyVersion);
        w.WriteBytes(Random);
        w.WriteVector8(LegacySessionIdEcho);
        w.WriteUInt16(CipherSuite);
        w.WriteUInt8(0);
        int exts = w.BeginVector(2);
        w.WriteUInt16((ushort)ExtensionType.SupportedVersions);
        w.WriteUInt16(2);
        w.WriteUInt16(ClientHello.Tls13);
        if (KeyShare == null)
        {
            if (HasKeyShare)
            {
                // HelloRetryRequest: KeyShareHelloRetryRequest { NamedGroup selected_group; } (RFC 8446 §4.2.8).
                w.WriteUInt16((ushort)ExtensionType.KeyShare);
                w.WriteUInt16(2);
                w.WriteUInt16(KeyShareGroup);
            }
        }
        else
        {
            w.WriteUInt16((ushort)ExtensionType.KeyShare);
            int e = w.BeginVector(2);
            w.WriteUInt16(KeyShareGroup);
            w.WriteVector16(KeyShare);
            w.EndVector(e, 2);
        }
        if (Cookie != null)
        {
            w.WriteUInt16((ushort)ExtensionType.Cookie);
            int e = w.BeginVector(2);
            w.WriteVector16(Cookie);
            w.EndVector(e, 2);
        }
        if (SelectedIdentity >= 0)
        {
            w.WriteUInt16((ushort)ExtensionType.PreSharedKey);
            w.WriteUInt16(2);
            w.WriteUInt16((ushort)SelectedIdentity);
        }
        w.EndVector(exts, 2);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out ServerHello hello)
    {
        hello = new ServerHello();
        var r = new TlsReader(body);
        if (!r.TryReadUInt16(out ushort legacyVersion)) return TlsAlert.DecodeError;
        if (!r.TryReadBytes(32, out ReadOnlySpan<byte> random)) return TlsAlert.DecodeError;
        hello.Random = random.ToArray();
        if (!r.TryReadVector8(out ReadOnlySpan<byte> sid) || sid.Length > 32) return TlsAlert.DecodeError;
        hello.LegacySessionIdEcho = sid.ToArray();
        if (!r.TryReadUInt16(out hello.CipherSuite)) return TlsAlert.DecodeError;
        if (!r.TryReadUInt8(out byte compression)) return TlsAlert.DecodeError;
        if (r.IsEmpty) return TlsAlert.ProtocolVersion; // no extensions: a TLS 1.2 or older ServerHello.
        if (!r.TryReadVector16(out ReadOnlySpan<byte> extensions) || !r.IsEmpty) return TlsAlert.DecodeError;
        if (legacyVersion != ClientHello.LegacyVersion) return TlsAlert.ProtocolVersion;
        if (compression != 0) return TlsAlert.IllegalParameter;
        bool hrr = hello.IsHelloRetryRequest;

        var er = new TlsReader(extensions);
        var seen = new ExtensionSet();
        while (!er.IsEmpty)
        {
            if (!er.TryReadUInt16(out ushort type) || !er.TryReadVector16(out ReadOnlySpan<byte> data)) return TlsAlert.DecodeError;
            if (!seen.TryAdd(type)) return TlsAlert.IllegalParameter;
            var x = new TlsReader(data);
            switch ((ExtensionType)type)
            {
                case ExtensionType.SupportedVersions:
                    if (!x.TryReadUInt16(out hello.SelectedVersion) || !x.IsEmpty) return TlsAlert.DecodeError;
                    break;
                case ExtensionType.KeyShare:
                    if (!x.TryReadUInt16(out hello.KeyShareGroup)) return TlsAlert.DecodeError;
                    if (!hrr)
                    {
                        if (!x.TryReadVector16(out ReadOnlySpan<byte> key) || key.Length == 0) return TlsAlert.DecodeError;
                        hello.KeyShare = key.ToArray();
                    }
                    if (!x.IsEmpty) return TlsAlert.DecodeError;
                    hello.HasKeyShare = true;
                    break;
                case ExtensionType.Cookie when hrr:
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> cookie) || !x.IsEmpty || cookie.Length == 0) return TlsAlert.DecodeError;
                    hello.Cookie = cookie.ToArray();
                    break;
                case ExtensionType.PreSharedKey when !hrr:
                    if (!x.TryReadUInt16(out ushort selected) || !x.IsEmpty) return TlsAlert.DecodeError;
                    hello.SelectedIdentity = selected;
                    break;
                default:
                    // RFC 8446 §4.1.3/§4.1.4: extensions not offered by the client (or not allowed here).
                    return TlsAlert.UnsupportedExtension;
            }
        }
        if (hello.SelectedVersion == 0) return TlsAlert.ProtocolVersion; // TLS 1.2 or older: not supported.
        if (hello.SelectedVersion != ClientHello.Tls13) return TlsAlert.IllegalParameter;
        return null;
    }
}
