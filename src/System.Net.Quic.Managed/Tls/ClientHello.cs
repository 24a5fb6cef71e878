using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace System.Net.Quic.Managed.Tls;

/// <summary>ClientHello (RFC 8446 §4.1.2) with the extensions this engine understands.</summary>
internal sealed class ClientHello
{
    public const ushort LegacyVersion = 0x0303;
    public const ushort Tls13 = 0x0304;

    public byte[] Random = new byte[32];
    public byte[] LegacySessionId = Array.Empty<byte>();
    public List<ushort> CipherSuites = new();
    public bool CompressionIsNullOnly = true;
    public string? ServerName;
    public List<ushort> SupportedGroups = new();
    public List<KeyShareEntry> KeyShares = new();
    public bool HasKeyShare;
    public List<ushort> SignatureAlgorithms = new();
    public bool HasSignatureAlgorithms;
    public List<byte[]> ApplicationProtocols = new();
    public bool HasAlpn;
    public byte[]? TransportParameters;
    public bool HasSupportedVersions;
    public bool OffersTls13;
    public byte[]? Cookie;
    public byte[]? PskKeyExchangeModes;
    public List<PskIdentity> PskIdentities = new();
    public List<byte[]> PskBinders = new();
    public bool EarlyData;
    /// <summary>Length of the ClientHello message (header included) up to the binders list: the part the PSK binder covers (RFC 8446 §4.2.11.2).</summary>
    public int BindersOffset = -1;

    /// <summary>Encodes the whole message including the 4-byte handshake header. Binders are written as given (zeros while computing them).</summary>
    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.ClientHello);
        w.WriteUInt16(LegacyVersion);
        w.WriteBytes(Random);
        w.WriteVector8(LegacySessionId);
        int cs = w.BeginVector(2);
        foreach (ushort s in CipherSuites) w.WriteUInt16(s);
        w.EndVector(cs, 2);
        w.WriteUInt8(1);
        w.WriteUInt8(0);
        int exts = w.BeginVector(2);

        if (ServerName != null)
        {
            // RFC 6066 §3: server_name_list with one host_name entry.
            w.WriteUInt16((ushort)ExtensionType.ServerName);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            w.WriteUInt8(0);
            w.WriteVector16(EncodeServerName(ServerName));
            w.EndVector(list, 2);
            w.EndVector(e, 2);
        }
        if (SupportedGroups.Count > 0)
        {
            w.WriteUInt16((ushort)ExtensionType.SupportedGroups);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            foreach (ushort g in SupportedGroups) w.WriteUInt16(g);
            w.EndVector(list, 2);
            w.EndVector(e, 2);
        }
        if (SignatureAlgorithms.Count > 0)
        {
            w.WriteUInt16((ushort)ExtensionType.SignatureAlgorithms);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            foreach (ushort g in SignatureAlgorithms) w.WriteUInt16(g);
            w.EndVector(list, 2);
            w.EndVector(e, 2);
        }
        if (ApplicationProtocols.Count > 0)
        {
            w.WriteUInt16((ushort)ExtensionType.ApplicationLayerProtocolNegotiation);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            foreach (byte[] p in ApplicationProtocols) w.WriteVector8(p);
            w.EndVector(list, 2);
            w.EndVector(e, 2);
        }
        {
            w.WriteUInt16((ushort)ExtensionType.SupportedVersions);
            int e = w.BeginVector(2);
            int list = w.BeginVector(1);
            w.WriteUInt16(Tls13);
            w.EndVector(list, 1);
            w.EndVector(e, 2);
        }
        {
            w.WriteUInt16((ushort)ExtensionType.KeyShare);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            foreach (KeyShareEntry k in KeyShares)
            {
                w.WriteUInt16(k.Group);
                w.WriteVector16(k.KeyExchange);
            }
            w.EndVector(list, 2);
            w.EndVector(e, 2);
        }
        if (Cookie != null)
        {
            w.WriteUInt16((ushort)ExtensionType.Cookie);
            int e = w.BeginVector(2);
            w.WriteVector16(Cookie);
            w.EndVector(e, 2);
        }
        if (PskKeyExchangeModes != null)
        {
            w.WriteUInt16((ushort)ExtensionType.PskKeyExchangeModes);
            int e = w.BeginVector(2);
            w.WriteVector8(PskKeyExchangeModes);
            w.EndVector(e, 2);
        }
        if (EarlyData)
        {
            w.WriteUInt16((ushort)ExtensionType.EarlyData);
            w.WriteUInt16(0);
        }
        if (TransportParameters != null)
        {
            w.WriteUInt16((ushort)ExtensionType.QuicTransportParameters);
            w.WriteVector16(TransportParameters);
        }
        if (PskIdentities.Count > 0)
        {
            // RFC 8446 §4.2.11: pre_shared_key MUST be the last extension.
            w.WriteUInt16((ushort)ExtensionType.PreSharedKey);
            int e = w.BeginVector(2);
            int ids = w.BeginVector(2);
            foreach (PskIdentity id in PskIdentities)
            {
                w.WriteVector16(id.Identity);
                w.WriteUInt32(id.ObfuscatedTicketAge);
            }
            w.EndVector(ids, 2);
            BindersOffset = w.Length - (msg - 4);
            int binders = w.BeginVector(2);
            foreach (byte[] b in PskBinders) w.WriteVector8(b);
            w.EndVector(binders, 2);
            w.EndVector(e, 2);
        }
        w.EndVector(exts, 2);
        w.EndMessage(msg);
    }

    /// <summary>Decodes a ClientHello body (after the 4-byte header). Returns null on success or the alert to send.</summary>
    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out ClientHello hello)
    {
        hello = new ClientHello();
        var r = new TlsReader(body);
        if (!r.TryReadUInt16(out _)) return TlsAlert.DecodeError;
        if (!r.TryReadBytes(32, out ReadOnlySpan<byte> random)) return TlsAlert.DecodeError;
        hello.Random = random.ToArray();
        if (!r.TryReadVector8(out ReadOnlySpan<byte> sid) || sid.Length > 32) return TlsAlert.DecodeError;
        hello.LegacySessionId = sid.ToArray();
        if (!r.TryReadVector16(out ReadOnlySpan<byte> suites) || suites.Length < 2 || (suites.Length & 1) != 0) return TlsAlert.DecodeError;
        for (int i = 0; i < suites.Length; i += 2) hello.CipherSuites.Add((ushort)((suites[i] << 8) | suites[i + 1]));
        if (!r.TryReadVector8(out ReadOnlySpan<byte> compression) || compression.Length < 1) return TlsAlert.DecodeError;
        hello.CompressionIsNullOnly = compression.Length == 1 && compression[0] == 0;
        if (r.IsEmpty) return TlsAlert.MissingExtension; // TLS 1.3 requires supported_versions.
        if (!r.TryReadVector16(out ReadOnlySpan<byte> extensions) || !r.IsEmpty) return TlsAlert.DecodeError;

        var er = new TlsReader(extensions);
        var seen = new ExtensionSet();
        int extensionsStart = 4 + body.Length - extensions.Length;
        while (!er.IsEmpty)
        {
            if (hello.PskIdentities.Count > 0) return TlsAlert.IllegalParameter; // pre_shared_key must be last.
            int extOffset = extensionsStart + (extensions.Length - er.Remaining);
            if (!er.TryReadUInt16(out ushort type) || !er.TryReadVector16(out ReadOnlySpan<byte> data)) return TlsAlert.DecodeError;
            if (!seen.TryAdd(type)) return TlsAlert.IllegalParameter;
            var x = new TlsReader(data);
            switch ((ExtensionType)type)
            {
                case ExtensionType.ServerName:
                {
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> list) || !x.IsEmpty) return TlsAlert.DecodeError;
                    var lr = new TlsReader(list);
                    while (!lr.IsEmpty)
                    {
                        if (!lr.TryReadUInt8(out byte nameType) || !lr.TryReadVector16(out ReadOnlySpan<byte> name)) return TlsAlert.DecodeError;
                        if (nameType != 0) continue;
                        if (hello.ServerName != null || name.Length == 0) return TlsAlert.IllegalParameter;
                        if (DecodeServerName(name) is not { } serverName) return TlsAlert.IllegalParameter;
                        hello.ServerName = serverName;
                    }
                    break;
                }
                case ExtensionType.SupportedGroups:
                    if (!ReadUInt16List(ref x, hello.SupportedGroups)) return TlsAlert.DecodeError;
                    break;
                case ExtensionType.SignatureAlgorithms:
                    if (!ReadUInt16List(ref x, hello.SignatureAlgorithms)) return TlsAlert.DecodeError;
                    hello.HasSignatureAlgorithms = true;
                    break;
                case ExtensionType.ApplicationLayerProtocolNegotiation:
                {
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> list) || !x.IsEmpty || list.Length == 0) return TlsAlert.DecodeError;
                    var lr = new TlsReader(list);
                    while (!lr.IsEmpty)
                    {
                        if (!lr.TryReadVector8(out ReadOnlySpan<byte> p) || p.Length == 0) return TlsAlert.DecodeError;
                        hello.ApplicationProtocols.Add(p.ToArray());
                    }
                    hello.HasAlpn = true;
                    break;
                }
                case ExtensionType.SupportedVersions:
                {
                    if (!x.TryReadVector8(out ReadOnlySpan<byte> list) || !x.IsEmpty || list.Length < 2 || (list.Length & 1) != 0) return TlsAlert.DecodeError;
                    for (int i = 0; i < list.Length; i += 2)
                    {
                        if (list[i] == 0x03 && list[i + 1] == 0x04) hello.OffersTls13 = true;
                    }
                    hello.HasSupportedVersions = true;
                    break;
                }
                case ExtensionType.KeyShare:
                {
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> list) || !x.IsEmpty) return TlsAlert.DecodeError;
                    var lr = new TlsReader(list);
                    while (!lr.IsEmpty)
                    {
                        if (!lr.TryReadUInt16(out ushort group) || !lr.TryReadVector16(out ReadOnlySpan<byte> key) || key.Length == 0) return TlsAlert.DecodeError;
                        foreach (KeyShareEntry k in hello.KeyShares)
                        {
                            // RFC 8446 §4.2.8: clients MUST NOT offer multiple KeyShareEntry values for the same group.
                            if (k.Group == group) return TlsAlert.IllegalParameter;
                        }
                        hello.KeyShares.Add(new KeyShareEntry(group, key.ToArray()));
                    }
                    hello.HasKeyShare = true;
                    break;
                }
                case ExtensionType.Cookie:
                {
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> cookie) || !x.IsEmpty || cookie.Length == 0) return TlsAlert.DecodeError;
                    hello.Cookie = cookie.ToArray();
                    break;
                }
                case ExtensionType.PskKeyExchangeModes:
                {
                    if (!x.TryReadVector8(out ReadOnlySpan<byte> modes) || !x.IsEmpty || modes.Length == 0) return TlsAlert.DecodeError;
                    hello.PskKeyExchangeModes = modes.ToArray();
                    break;
                }
                case ExtensionType.EarlyData:
                    if (!x.IsEmpty) return TlsAlert.DecodeError;
                    hello.EarlyData = true;
                    break;
                case ExtensionType.QuicTransportParameters:
                    hello.TransportParameters = data.ToArray();
                    break;
                case ExtensionType.PreSharedKey:
                {
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> ids) || ids.Length == 0) return TlsAlert.DecodeError;
                    var ir = new TlsReader(ids);
                    while (!ir.IsEmpty)
                    {
                        if (!ir.TryReadVector16(out ReadOnlySpan<byte> id) || id.Length == 0 || !ir.TryReadUInt32(out uint age)) return TlsAlert.DecodeError;
                        hello.PskIdentities.Add(new PskIdentity(id.ToArray(), age));
                    }
                    hello.BindersOffset = extOffset + 4 + 2 + ids.Length;
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> binders) || !x.IsEmpty || binders.Length == 0) return TlsAlert.DecodeError;
                    var br = new TlsReader(binders);
                    while (!br.IsEmpty)
                    {
                        if (!br.TryReadVector8(out ReadOnlySpan<byte> b) || b.Length < 32) return TlsAlert.DecodeError;
                        hello.PskBinders.Add(b.ToArray());
                    }
                    if (hello.PskBinders.Count != hello.PskIdentities.Count) return TlsAlert.IllegalParameter;
                    break;
                }
                default:
                    // RFC 8446 §4.1.2: unknown extensions in ClientHello are ignored.
                    break;
            }
        }
        return null;
    }

    internal static bool ReadUInt16List(ref TlsReader x, List<ushort> list)
    {
        if (!x.TryReadVector16(out ReadOnlySpan<byte> data) || !x.IsEmpty || data.Length < 2 || (data.Length & 1) != 0) return false;
        for (int i = 0; i < data.Length; i += 2) list.Add((ushort)((data[i] << 8) | data[i + 1]));
        return true;
    }

    private static readonly IdnMapping s_idn = new();

    /// <summary>
    /// The host_name bytes for <paramref name="host"/> as SslStream and msquic send them: IDN-encoded (punycode A-labels,
    /// RFC 5890) without a trailing dot; a name IDNA refuses goes as its UTF-8 bytes.
    /// </summary>
    internal static byte[] EncodeServerName(string host)
    {
        host = host.TrimEnd('.');
        try
        {
            host = s_idn.GetAscii(host);
        }
        catch (ArgumentException)
        {
            // Not a valid IDN (e.g. it has spaces): sent as is.
        }
        return Encoding.UTF8.GetBytes(host);
    }

    /// <summary>
    /// A received host_name as the application sees it (SslStream's TargetHostName): A-labels decoded back to Unicode;
    /// null for bytes no name has (control characters, invalid UTF-8).
    /// </summary>
    internal static string? DecodeServerName(ReadOnlySpan<byte> name)
    {
        foreach (byte c in name)
        {
            if (c < 0x20 || c == 0x7f) return null;
        }
        string text;
        try
        {
            text = s_strictUtf8.GetString(name);
        }
        catch (DecoderFallbackException)
        {
            return null;
        }
        if (!text.Contains("xn--", StringComparison.OrdinalIgnoreCase)) return text;
        try
        {
            return s_idn.GetUnicode(text);
        }
        catch (ArgumentException)
        {
            return text;
        }
    }

    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);
}
