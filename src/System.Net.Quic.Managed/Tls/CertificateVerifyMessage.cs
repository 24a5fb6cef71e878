namespace System.Net.Quic.Managed.Tls;

/// <summary>CertificateVerify (RFC 8446 §4.4.3).</summary>
internal sealed class CertificateVerifyMessage
{
    public ushort Scheme;
    public byte[] Signature = Array.Empty<byte>();

    public void Encode(TlsWriter w)
    {
        int msg = w.BeginMessage(HandshakeType.CertificateVerify);
        w.WriteUInt16(Scheme);
        w.WriteVector16(Signature);
        w.EndMessage(msg);
    }

    public static TlsAlert? TryDecode(ReadOnlySpan<byte> body, out CertificateVerifyMessage message)
    {
        message = new CertificateVerifyMessage();
        var r = new TlsReader(body);
        if (!r.TryReadUInt16(out message.Scheme) || !r.TryReadVector16(out ReadOnlySpan<byte> sig) || !r.IsEmpty || sig.Length == 0) return TlsAlert.DecodeError;
        message.Signature = sig.ToArray();
        return null;
    }
}
