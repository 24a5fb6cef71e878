namespace System.Net.Quic.Managed.Tls;

/// <summary>EncryptedExtensions (RFC 8446 §4.3.1).</summary>
internal sealed class EncryptedExtensions
{
    public byte[]? ApplicationProtocol;
    public byte[]? TransportParameters;
    public bool ServerNameAcknowledged;
    public bool EarlyData;

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.EncryptedExtensions);
        int exts = w.BeginVector(2);
        if (ServerNameAcknowledged)
        {
            w.WriteUInt16((ushort)ExtensionType.ServerName);
            w.WriteUInt16(0);
        }
        if (ApplicationProtocol != null)
        {
            w.WriteUInt16((ushort)ExtensionType.ApplicationLayerProtocolNegotiation);
            int e = w.BeginVector(2);
            int list = w.BeginVector(2);
            w.WriteVector8(ApplicationProtocol);
            w.EndVector(list, 2);
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
        w.EndVector(exts, 2);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out EncryptedExtensions ee)
    {
        ee = new EncryptedExtensions();
        var r = new TlsReader(body);
        if (!r.TryReadVector16(out ReadOnlySpan<byte> extensions) || !r.IsEmpty) return TlsAlert.DecodeError;
        var er = new TlsReader(extensions);
        var seen = new ExtensionSet();
        while (!er.IsEmpty)
        {
            if (!er.TryReadUInt16(out ushort type) || !er.TryReadVector16(out ReadOnlySpan<byte> data)) return TlsAlert.DecodeError;
            if (!seen.TryAdd(type)) return TlsAlert.IllegalParameter;
            var x = new TlsReader(data);
            switch ((ExtensionType)type)
            {
                case ExtensionType.ServerName:
                    if (!x.IsEmpty) return TlsAlert.DecodeError;
                    ee.ServerNameAcknowledged = true;
                    break;
                case ExtensionType.SupportedGroups:
                    // RFC 8446 §4.2.7: the server may send its groups; informational only.
                    break;
                case ExtensionType.ApplicationLayerProtocolNegotiation:
                {
                    // RFC 7301 §3.1: the server's list contains exactly one protocol.
                    if (!x.TryReadVector16(out ReadOnlySpan<byte> list) || !x.IsEmpty) return TlsAlert.DecodeError;
                    var lr = new TlsReader(list);
                    if (!lr.TryReadVector8(out ReadOnlySpan<byte> p) || p.Length == 0 || !lr.IsEmpty) return TlsAlert.DecodeError;
                    ee.ApplicationProtocol = p.ToArray();
                    break;
                }
                case ExtensionType.EarlyData:
                    if (!x.IsEmpty) return TlsAlert.DecodeError;
                    ee.EarlyData = true;
                    break;
                case ExtensionType.QuicTransportParameters:
                    ee.TransportParameters = data.ToArray();
                    break;
                case ExtensionType.SignatureAlgorithms:
                case ExtensionType.KeyShare:
                case ExtensionType.SupportedVersions:
                case ExtensionType.PreSharedKey:
                case ExtensionType.Cookie:
                case ExtensionType.PskKeyExchangeModes:
                    // RFC 8446 §4.2: a recognized extension in the wrong message is illegal_parameter.
                    return TlsAlert.IllegalParameter;
                default:
                    // RFC 8446 §4.2: responses may only contain extensions the client offered.
                    return TlsAlert.UnsupportedExtension;
            }
        }
        return null;
    }
}
