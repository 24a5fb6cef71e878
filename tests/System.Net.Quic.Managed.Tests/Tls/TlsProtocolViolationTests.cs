using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography.X509Certificates;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Hand-crafted protocol violations, each mapped to the alert RFC 8446 / RFC 9001 prescribe.</summary>
public class TlsProtocolViolationTests
{
    private static readonly Lazy<X509Certificate2> s_cert = new(() => TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256));

    private static ClientHello RealClientHello(out byte[] encoded)
    {
        using var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        encoded = client.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        Assert.Null(ClientHello.TryDecode(encoded.AsSpan(4), out ClientHello ch));
        return ch;
    }

    private static TlsAlert? ServerVerdict(ClientHello ch)
    {
        var w = new TlsWriter();
        ch.Encode(w);
        using var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(s_cert.Value));
        return server.ProcessCryptoData(EncryptionLevel.Initial, w.WrittenSpan) ? null : server.Alert;
    }

    [Fact]
    public void SameSeed_SameClientHello()
    {
        RealClientHello(out byte[] a);
        RealClientHello(out byte[] b);
        Assert.Equal(a, b);
    }

    [Fact]
    public void ReencodedClientHello_IsByteIdentical()
    {
        ClientHello ch = RealClientHello(out byte[] encoded);
        var w = new TlsWriter();
        ch.Encode(w);
        Assert.Equal(encoded, w.ToArray());
        Assert.Null(ServerVerdict(ch));
    }

    [Fact]
    public void NonEmptyLegacySessionId_IllegalParameter()
    {
        ClientHello ch = RealClientHello(out _);
        ch.LegacySessionId = new byte[32];
        Assert.Equal(TlsAlert.IllegalParameter, ServerVerdict(ch));
    }

    [Fact]
    public void NoCommonCipherSuite_HandshakeFailure()
    {
        ClientHello ch = RealClientHello(out _);
        ch.CipherSuites.Clear();
        ch.CipherSuites.Add(0x1304); // TLS_AES_128_CCM_SHA256: not supported here
        Assert.Equal(TlsAlert.HandshakeFailure, ServerVerdict(ch));
    }

    [Fact]
    public void NoSignatureAlgorithms_MissingExtension()
    {
        ClientHello ch = RealClientHello(out _);
        ch.SignatureAlgorithms.Clear();
        Assert.Equal(TlsAlert.MissingExtension, ServerVerdict(ch));
    }

    [Fact]
    public void KeyShareForUnadvertisedGroup_IllegalParameter()
    {
        ClientHello ch = RealClientHello(out _);
        ch.SupportedGroups.Remove((ushort)NamedGroup.X25519);
        Assert.Equal(TlsAlert.IllegalParameter, ServerVerdict(ch));
    }

    [Fact]
    public void InvalidX25519KeyShare_IllegalParameter()
    {
        ClientHello ch = RealClientHello(out _);
        ch.KeyShares[0] = new KeyShareEntry((ushort)NamedGroup.X25519, new byte[32]); // all-zero: small-order point
        Assert.Equal(TlsAlert.IllegalParameter, ServerVerdict(ch));
    }

    [Fact]
    public void InvalidP256KeyShare_IllegalParameter()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Groups = [NamedGroup.Secp256r1];
        using var client = new TlsHandshake(false, co);
        Assert.True(client.Start());
        Assert.Null(ClientHello.TryDecode(client.GetPendingOutput(EncryptionLevel.Initial).Slice(4), out ClientHello ch));
        byte[] point = (byte[])ch.KeyShares[0].KeyExchange.Clone();
        point[^1] ^= 1; // off the curve
        ch.KeyShares[0] = new KeyShareEntry((ushort)NamedGroup.Secp256r1, point);
        Assert.Equal(TlsAlert.IllegalParameter, ServerVerdict(ch));
    }

    [Fact]
    public void ServerHelloWithUnofferedSuite_IllegalParameter()
    {
        using var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        using var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(s_cert.Value));
        Assert.True(server.ProcessCryptoData(EncryptionLevel.Initial, client.GetPendingOutput(EncryptionLevel.Initial)));
        byte[] sh = server.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        int suiteOffset = 4 + 2 + 32 + 1 + sh[4 + 2 + 32];
        sh[suiteOffset] = 0x13;
        sh[suiteOffset + 1] = 0x04;
        Assert.False(client.ProcessCryptoData(EncryptionLevel.Initial, sh));
        Assert.Equal(TlsAlert.IllegalParameter, client.Alert);
    }

    [Fact]
    public void DataAfterServerHelloAtInitial_UnexpectedMessage()
    {
        using var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        using var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(s_cert.Value));
        Assert.True(server.ProcessCryptoData(EncryptionLevel.Initial, client.GetPendingOutput(EncryptionLevel.Initial)));
        byte[] sh = server.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        // RFC 8446 §5.1: a handshake message may not follow ServerHello at the old key.
        byte[] withTrailer = [.. sh, (byte)HandshakeType.EncryptedExtensions, 0, 0, 2, 0, 0];
        Assert.False(client.ProcessCryptoData(EncryptionLevel.Initial, withTrailer));
        Assert.Equal(TlsAlert.UnexpectedMessage, client.Alert);
    }

    [Fact]
    public void SecondHelloRetryRequest_UnexpectedMessage()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Groups = [NamedGroup.X25519, NamedGroup.Secp256r1];
        var so = TlsEnginePair.ServerOptions(s_cert.Value);
        so.Groups = [NamedGroup.Secp256r1];
        using var client = new TlsHandshake(false, co);
        using var server = new TlsHandshake(true, so);
        Assert.True(client.Start());
        Assert.True(server.ProcessCryptoData(EncryptionLevel.Initial, client.GetPendingOutput(EncryptionLevel.Initial)));
        byte[] hrr = server.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        Assert.True(client.ProcessCryptoData(EncryptionLevel.Initial, hrr));
        Assert.True(client.HelloRetryRequestPerformed);
        Assert.False(client.ProcessCryptoData(EncryptionLevel.Initial, hrr));
        Assert.Equal(TlsAlert.UnexpectedMessage, client.Alert);
    }
}
