using System.Collections.Generic;

namespace System.Net.Quic.Managed.Tls;

/// <summary>CertificateRequest (RFC 8446 §4.3.2).</summary>
internal sealed class CertificateRequest
{
    public byte[] Context = Array.Empty<byte>();
    public List<ushort> SignatureAlgorithms = new();

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.CertificateRequest);
        w.WriteVector8(Context);
        int exts = w.BeginVector(2);
        w.WriteUInt16((ushort)ExtensionType.SignatureAlgorithms);
        int e = w.BeginVector(2);
        int list = w.BeginVector(2);
        foreach (ushort s in SignatureAlgorithms) w.WriteUInt16(s);
        w.EndVector(list, 2);
        w.EndVector(e, 2);
        w.EndVector(exts, 2);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out CertificateRequest request)
    {
        request = new CertificateRequest();
        var r = new TlsReader(body);
        if (!r.TryReadVector8(out ReadOnlySpan<byte> context)) return TlsAlert.DecodeError;
        request.Context = context.ToArray();
        if (!r.TryReadVector16(out ReadOnlySpan<byte> extensions) || !r.IsEmpty) return TlsAlert.DecodeError;
        var er = new TlsReader(extensions);
        var seen = new ExtensionSet();
        bool hasSignatureAlgorithms = false;
        while (!er.IsEmpty)
        {
            if (!er.TryReadUInt16(out ushort type) || !er.TryReadVector16(out ReadOnlySpan<byte> data)) return TlsAlert.DecodeError;
            if (!seen.TryAdd(type)) return TlsAlert.IllegalParameter;
            if (type == (ushort)ExtensionType.SignatureAlgorithms)
            {
                var x = new TlsReader(data);
                if (!ClientHello.ReadUInt16List(ref x, request.SignatureAlgorithms)) return TlsAlert.DecodeError;
                hasSignatureAlgorithms = true;
            }
            // RFC 8446 §4.3.2: unrecognized extensions are ignored.
        }
        if (!hasSignatureAlgorithms) return TlsAlert.MissingExtension;
        return null;
    }
}
