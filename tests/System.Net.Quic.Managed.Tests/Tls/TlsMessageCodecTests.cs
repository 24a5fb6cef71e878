using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Decoding the RFC 8448 messages and round-tripping our own encodings.</summary>
public class TlsMessageCodecTests
{
    [Fact]
    public void HelloRetryRequestRandom_IsSha256OfHelloRetryRequest()
        => Assert.Equal(SHA256.HashData("HelloRetryRequest"u8.ToArray()), ServerHello.HelloRetryRequestRandom.ToArray());

    [Fact]
    public void Rfc8448_ClientHello_Decodes()
    {
        byte[] m = Rfc8448KeyScheduleTests.ClientHello;
        Assert.Null(ClientHello.TryDecode(m.AsSpan(4), out ClientHello ch));
        Assert.Equal("server", ch.ServerName);
        Assert.Equal(new ushort[] { 0x1301, 0x1303, 0x1302 }, ch.CipherSuites);
        Assert.True(ch.OffersTls13);
        Assert.Equal((ushort)NamedGroup.X25519, Assert.Single(ch.KeyShares).Group);
        Assert.Equal(Convert.FromHexString("99381de560e4bd43d23d8e435a7dbafeb3c06e51c13cae4d5413691e529aaf2c"), ch.KeyShares[0].KeyExchange);
        Assert.Contains((ushort)SignatureScheme.RsaPssRsaeSha256, ch.SignatureAlgorithms);
        Assert.Equal(new byte[] { 1 }, ch.PskKeyExchangeModes);
        Assert.Empty(ch.LegacySessionId);
    }

    [Fact]
    public void Rfc8448_ResumedClientHello_BinderOffsetIsTheTruncationPoint()
    {
        byte[] prefix = Rfc8448KeyScheduleTests.ResumedClientHelloPrefix;
        byte[] full = [.. prefix, 0x00, 0x21, 0x20, .. Convert.FromHexString("3add4fb2d8fdf822a0ca3cf7678ef5e88dae990141c5924d57bb6fa31b9e5f9d")];
        Assert.Equal(512, full.Length);
        Assert.Null(ClientHello.TryDecode(full.AsSpan(4), out ClientHello ch));
        Assert.Equal(prefix.Length, ch.BindersOffset);
        Assert.True(ch.EarlyData);
        Assert.Single(ch.PskIdentities);
        Assert.Equal(0xfad6aacbu, ch.PskIdentities[0].ObfuscatedTicketAge);
        Assert.Equal(178, ch.PskIdentities[0].Identity.Length);
    }

    [Fact]
    public void Rfc8448_ServerHelloAndEncryptedExtensions_Decode()
    {
        Assert.Null(ServerHello.TryDecode(Rfc8448KeyScheduleTests.ServerHello.AsSpan(4), out ServerHello sh));
        Assert.False(sh.IsHelloRetryRequest);
        Assert.Equal(0x1301, sh.CipherSuite);
        Assert.Equal((ushort)NamedGroup.X25519, sh.KeyShareGroup);
        Assert.Equal(Convert.FromHexString("c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b04e751f0f"), sh.KeyShare);

        // RFC 8448's EncryptedExtensions carries supported_groups, record_size_limit (28) and server_name: the last
        // two were not offered by our client, so our decoder flags record_size_limit as unsupported.
        Assert.Equal(TlsAlert.UnsupportedExtension, EncryptedExtensions.TryDecode(Rfc8448KeyScheduleTests.EncryptedExtensions.AsSpan(4), out _));
    }

    [Fact]
    public void Rfc8448_Certificate_And_CertificateVerify_Decode()
    {
        Assert.Null(CertificateMessage.TryDecode(Rfc8448KeyScheduleTests.Certificate.AsSpan(4), out CertificateMessage cert));
        Assert.Equal(432, Assert.Single(cert.Certificates).Length);
        Assert.Null(CertificateVerifyMessage.TryDecode(Rfc8448KeyScheduleTests.CertificateVerify.AsSpan(4), out CertificateVerifyMessage cv));
        Assert.Equal((ushort)SignatureScheme.RsaPssRsaeSha256, cv.Scheme);
        Assert.Equal(128, cv.Signature.Length);
    }

    [Fact]
    public void Rfc8448_CertificateVerify_SignatureVerifiesAgainstTranscript()
    {
        // RFC 8448 §3: the server's RSA-PSS CertificateVerify over CH..Certificate must verify with our code.
        var t = new TranscriptHash();
        t.Append(Rfc8448KeyScheduleTests.ClientHello);
        t.Append(Rfc8448KeyScheduleTests.ServerHello);
        t.Append(Rfc8448KeyScheduleTests.EncryptedExtensions);
        t.Append(Rfc8448KeyScheduleTests.Certificate);
        byte[] th = new byte[32];
        t.GetHash(HashAlgorithmName.SHA256, th);
        Assert.Null(CertificateMessage.TryDecode(Rfc8448KeyScheduleTests.Certificate.AsSpan(4), out CertificateMessage cert));
        Assert.Null(CertificateVerifyMessage.TryDecode(Rfc8448KeyScheduleTests.CertificateVerify.AsSpan(4), out CertificateVerifyMessage cv));
        using var x509 = System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificate(cert.Certificates[0]);
        byte[] content = CertificateSignature.BuildSignedContent(server: true, th);
        Assert.True(CertificateSignature.Verify(x509, SignatureScheme.RsaPssRsaeSha256, content, cv.Signature));
        content[^1] ^= 1;
        Assert.False(CertificateSignature.Verify(x509, SignatureScheme.RsaPssRsaeSha256, content, cv.Signature));
    }

    [Fact]
    public void ClientHello_RoundTrip()
    {
        var ch = new ClientHello { ServerName = "example.org", TransportParameters = [9, 9], Cookie = [7], EarlyData = true, PskKeyExchangeModes = [1] };
        ch.CipherSuites.AddRange(new ushort[] { 0x1301, 0x1302 });
        ch.SupportedGroups.Add(0x1d);
        ch.KeyShares.Add(new KeyShareEntry(0x1d, new byte[32]));
        ch.SignatureAlgorithms.Add(0x0403);
        ch.ApplicationProtocols.Add("h3"u8.ToArray());
        ch.PskIdentities.Add(new PskIdentity([1, 2, 3], 42));
        ch.PskBinders.Add(new byte[32]);
        var w = new TlsWriter();
        ch.Encode(w);
        byte[] m = w.ToArray();
        Assert.Null(ClientHello.TryDecode(m.AsSpan(4), out ClientHello d));
        Assert.Equal("example.org", d.ServerName);
        Assert.Equal(new byte[] { 9, 9 }, d.TransportParameters);
        Assert.Equal(new byte[] { 7 }, d.Cookie);
        Assert.True(d.EarlyData);
        Assert.Equal(ch.BindersOffset, d.BindersOffset);
        Assert.Equal(42u, d.PskIdentities[0].ObfuscatedTicketAge);
        Assert.Equal("h3"u8.ToArray(), Assert.Single(d.ApplicationProtocols));
    }

    [Fact]
    public void DuplicateExtension_IllegalParameter()
    {
        var ch = new ClientHello();
        ch.CipherSuites.Add(0x1301);
        var w = new TlsWriter();
        ch.Encode(w);
        byte[] m = w.ToArray();
        // Append a second supported_versions extension and fix up the lengths.
        byte[] dup = [0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04];
        byte[] body = [.. m.AsSpan(4).ToArray(), .. dup];
        // Locate the extensions length: after version, random, session id, cipher suites and compression methods.
        int pos = 2 + 32 + 1 + body[2 + 32];
        pos += 2 + ((body[pos] << 8) | body[pos + 1]);
        pos += 1 + body[pos];
        int extLen = ((body[pos] << 8) | body[pos + 1]) + dup.Length;
        body[pos] = (byte)(extLen >> 8);
        body[pos + 1] = (byte)extLen;
        Assert.Equal(TlsAlert.IllegalParameter, ClientHello.TryDecode(body, out _));
    }

    [Fact]
    public void NewSessionTicket_RoundTripAndLifetimeBound()
    {
        var nst = new NewSessionTicket { LifetimeSeconds = 100, AgeAdd = 5, Nonce = [0], Ticket = [1, 2], MaxEarlyDataSize = 0xffffffff };
        var w = new TlsWriter();
        nst.Encode(w);
        byte[] m = w.ToArray();
        Assert.Null(NewSessionTicket.TryDecode(m.AsSpan(4), out NewSessionTicket d));
        Assert.Equal(0xffffffffu, d.MaxEarlyDataSize);
        nst.LifetimeSeconds = 604801;
        w.Clear();
        nst.Encode(w);
        Assert.Equal(TlsAlert.IllegalParameter, NewSessionTicket.TryDecode(w.ToArray().AsSpan(4), out _));
    }
}
