using System.Collections.Generic;

namespace System.Net.Quic.Managed.Tls;

/// <summary>Certificate (RFC 8446 §4.4.2): X.509 entries in DER, end-entity first.</summary>
internal sealed class CertificateMessage
{
    public byte[] Context = Array.Empty<byte>();
    public List<byte[]> Certificates = new();

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.Certificate);
        w.WriteVector8(Context);
        int list = w.BeginVector(3);
        foreach (byte[] c in Certificates)
        {
            w.WriteVector24(c);
            w.WriteUInt16(0); // no per-entry extensions
        }
        w.EndVector(list, 3);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out CertificateMessage message)
    {
        message = new CertificateMessage();
        var r = new TlsReader(body);
        if (!r.TryReadVector8(out ReadOnlySpan<byte> context)) return TlsAlert.DecodeError;
        message.Context = context.ToArray();
        if (!r.TryReadVector24(out ReadOnlySpan<byte> list) || !r.IsEmpty) return TlsAlert.DecodeError;
        var lr = new TlsReader(list);
        while (!lr.IsEmpty)
        {
            if (!lr.TryReadVector24(out ReadOnlySpan<byte> cert) || cert.Length == 0) return TlsAlert.DecodeError;
            if (!lr.TryReadVector16(out _)) return TlsAlert.DecodeError; // status_request / SCT extensions are not requested, so ignored
            message.Certificates.Add(cert.ToArray());
        }
        return null;
    }
}
