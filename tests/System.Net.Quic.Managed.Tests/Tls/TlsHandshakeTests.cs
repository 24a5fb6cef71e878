using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Engine-to-engine handshakes over every suite, group and signature scheme, plus failure paths.</summary>
public class TlsHandshakeTests
{
    private static readonly Lazy<X509Certificate2> s_p256 = new(() => TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256));
    private static readonly Lazy<X509Certificate2> s_p384 = new(() => TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP384));
    private static readonly Lazy<X509Certificate2> s_rsa = new(() => TlsTestCertificates.CreateLeaf(KeyKind.Rsa2048));

    private static X509Certificate2 Cert(KeyKind kind) => kind switch
    {
        KeyKind.EcdsaP384 => s_p384.Value,
        KeyKind.Rsa2048 => s_rsa.Value,
        _ => s_p256.Value,
    };

    private static void AssertSecretsAgree(TlsEnginePair p)
    {
        Assert.NotEmpty(p.ClientSecrets);
        foreach (TlsTrafficSecret c in p.ClientSecrets)
        {
            if (c.Level == EncryptionLevel.EarlyData) continue;
            TlsTrafficSecret s = p.ServerSecrets.Single(x => x.Level == c.Level && x.IsClientSecret == c.IsClientSecret);
            Assert.Equal(c.Secret, s.Secret);
            Assert.Equal(c.CipherSuite, s.CipherSuite);
            Assert.Equal(c.IsClientSecret, c.IsWrite);
            Assert.Equal(!s.IsClientSecret, s.IsWrite);
        }
        // Handshake and 1-RTT, both directions, on both sides.
        Assert.Equal(4, p.ClientSecrets.Count(x => x.Level != EncryptionLevel.EarlyData));
        Assert.Equal(4, p.ServerSecrets.Count(x => x.Level != EncryptionLevel.EarlyData));
    }

    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384)]
    [InlineData(TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256)]
    public void Handshake_EverySuite(TlsCipherSuite suite)
    {
        var co = TlsEnginePair.ClientOptions();
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.CipherSuites = [suite];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.Equal(suite, p.Client.NegotiatedCipherSuite);
        Assert.Equal(suite, p.Server.NegotiatedCipherSuite);
        AssertSecretsAgree(p);
        int hashLength = suite == TlsCipherSuite.TLS_AES_256_GCM_SHA384 ? 48 : 32;
        Assert.All(p.ClientSecrets, s => Assert.Equal(hashLength, s.Secret.Length));
        Assert.Equal("h3", p.Client.NegotiatedApplicationProtocol.ToString());
        Assert.Equal("h3", p.Server.NegotiatedApplicationProtocol.ToString());
        Assert.Equal("localhost", p.Server.ServerName);
        Assert.Equal(new byte[] { 0x0a, 0x0b }, p.Client.PeerTransportParameters);
        Assert.Equal(new byte[] { 1, 2, 3 }, p.Server.PeerTransportParameters);
        Assert.Equal(Cert(KeyKind.EcdsaP256).RawData, p.Client.PeerCertificate!.RawData);
        Assert.True(p.Server.IsHandshakeConfirmed);
        Assert.False(p.Client.IsHandshakeConfirmed);
        p.Client.OnHandshakeDoneReceived();
        Assert.True(p.Client.IsHandshakeConfirmed);
        Assert.Equal(p.Client.ResumptionMasterSecret.ToArray(), p.Server.ResumptionMasterSecret.ToArray());
        Assert.Equal(p.Client.ExporterMasterSecret.ToArray(), p.Server.ExporterMasterSecret.ToArray());
        Assert.False(p.Client.HasPendingOutput);

        // The secret labelled client_handshake_traffic_secret must be the one that keys the client's Finished
        // (RFC 8446 §4.4.4): recompute verify_data from the flights and that secret.
        var hash = suite == TlsCipherSuite.TLS_AES_256_GCM_SHA384 ? System.Security.Cryptography.HashAlgorithmName.SHA384 : System.Security.Cryptography.HashAlgorithmName.SHA256;
        var transcript = new TranscriptHash();
        transcript.Append(p.Flights.Single(f => f.FromClient && f.Level == EncryptionLevel.Initial).Data);
        transcript.Append(p.Flights.Single(f => !f.FromClient && f.Level == EncryptionLevel.Initial).Data);
        transcript.Append(p.Flights.Single(f => !f.FromClient && f.Level == EncryptionLevel.Handshake).Data);
        byte[] th = new byte[hashLength];
        transcript.GetHash(hash, th);
        byte[] expected = new byte[hashLength];
        byte[] clientHs = p.ClientSecrets.Single(s => s.Level == EncryptionLevel.Handshake && s.IsClientSecret).Secret;
        KeySchedule.ComputeFinished(hash, clientHs, th, expected);
        byte[] clientFinished = p.Flights.Single(f => f.FromClient && f.Level == EncryptionLevel.Handshake).Data;
        Assert.Equal(expected, clientFinished.AsSpan(4).ToArray());
    }

    [Theory]
    [InlineData((ushort)NamedGroup.X25519)]
    [InlineData((ushort)NamedGroup.Secp256r1)]
    [InlineData((ushort)NamedGroup.Secp384r1)]
    public void Handshake_EveryGroup(ushort groupValue)
    {
        var group = (NamedGroup)groupValue;
        var co = TlsEnginePair.ClientOptions();
        co.Groups = [group];
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.Equal(group, p.Client.NegotiatedGroup);
        Assert.Equal(group, p.Server.NegotiatedGroup);
        Assert.False(p.Client.HelloRetryRequestPerformed);
        AssertSecretsAgree(p);
    }

    [Theory]
    [InlineData((int)KeyKind.EcdsaP256, (ushort)SignatureScheme.EcdsaSecp256r1Sha256)]
    [InlineData((int)KeyKind.EcdsaP384, (ushort)SignatureScheme.EcdsaSecp384r1Sha384)]
    [InlineData((int)KeyKind.Rsa2048, (ushort)SignatureScheme.RsaPssRsaeSha256)]
    [InlineData((int)KeyKind.Rsa2048, (ushort)SignatureScheme.RsaPssRsaeSha384)]
    [InlineData((int)KeyKind.Rsa2048, (ushort)SignatureScheme.RsaPssRsaeSha512)]
    public void Handshake_EverySignatureScheme(int kindValue, ushort schemeValue)
    {
        var kind = (KeyKind)kindValue;
        var scheme = (SignatureScheme)schemeValue;
        var co = TlsEnginePair.ClientOptions();
        co.SignatureSchemes = [scheme];
        var so = TlsEnginePair.ServerOptions(Cert(kind));
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        AssertSecretsAgree(p);
        // The CertificateVerify the server sent carries the scheme.
        byte[] serverHandshakeFlight = p.Flights.First(f => !f.FromClient && f.Level == EncryptionLevel.Handshake).Data;
        Assert.True(ContainsCertificateVerifyWithScheme(serverHandshakeFlight, scheme));
    }

    private static bool ContainsCertificateVerifyWithScheme(byte[] flight, SignatureScheme scheme)
    {
        int i = 0;
        while (i + 4 <= flight.Length)
        {
            int len = (flight[i + 1] << 16) | (flight[i + 2] << 8) | flight[i + 3];
            if (flight[i] == (byte)HandshakeType.CertificateVerify) return ((flight[i + 4] << 8) | flight[i + 5]) == (int)scheme;
            i += 4 + len;
        }
        return false;
    }

    [Fact]
    public void Handshake_ServerRejectsSchemeItCannotProduce()
    {
        var co = TlsEnginePair.ClientOptions();
        co.SignatureSchemes = [SignatureScheme.EcdsaSecp384r1Sha384];
        using var p = new TlsEnginePair(co, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.HandshakeFailure, p.Server.Alert);
    }

    [Fact]
    public void HelloRetryRequest_ServerWantsAnotherGroup()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Groups = [NamedGroup.X25519, NamedGroup.Secp384r1];
        co.KeyShareGroups = [NamedGroup.X25519];
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.Groups = [NamedGroup.Secp384r1];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.True(p.Client.HelloRetryRequestPerformed);
        Assert.True(p.Server.HelloRetryRequestPerformed);
        Assert.Equal(NamedGroup.Secp384r1, p.Client.NegotiatedGroup);
        AssertSecretsAgree(p);
        // ClientHello, HRR, ClientHello2, ServerHello all at Initial.
        Assert.Equal(2, p.Flights.Count(f => f.FromClient && f.Level == EncryptionLevel.Initial));
    }

    [Theory]
    [InlineData(TlsCipherSuite.TLS_AES_128_GCM_SHA256)]
    [InlineData(TlsCipherSuite.TLS_AES_256_GCM_SHA384)]
    public void HelloRetryRequest_WithCookie(TlsCipherSuite suite)
    {
        var co = TlsEnginePair.ClientOptions();
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.ServerForceHelloRetryWithCookie = true;
        so.CipherSuites = [suite];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.True(p.Client.HelloRetryRequestPerformed);
        AssertSecretsAgree(p);
    }

    [Fact]
    public void HelloRetryRequest_NoCommonGroup_HandshakeFailure()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Groups = [NamedGroup.X25519];
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.Groups = [NamedGroup.Secp256r1];
        using var p = new TlsEnginePair(co, so);
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.HandshakeFailure, p.Server.Alert);
    }

    [Fact]
    public void MutualTls_ClientCertificateIsValidated()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Certificate = Cert(KeyKind.EcdsaP384);
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.Rsa2048));
        so.RequestClientCertificate = true;
        so.RequireClientCertificate = true;
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.Equal(Cert(KeyKind.EcdsaP384).RawData, p.Server.PeerCertificate!.RawData);
        AssertSecretsAgree(p);
    }

    [Fact]
    public void MutualTls_MissingRequiredClientCertificate_CertificateRequired()
    {
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.RequestClientCertificate = true;
        so.RequireClientCertificate = true;
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), so);
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.CertificateRequired, p.Server.Alert);
        Assert.Equal((TransportErrorCode)0x174, p.Server.ErrorCode);
    }

    [Fact]
    public void MutualTls_OptionalClientCertificateAbsent_Succeeds()
    {
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.RequestClientCertificate = true;
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.Null(p.Server.PeerCertificate);
    }

    [Fact]
    public void MutualTls_UntrustedClientCertificate_UnknownCa()
    {
        var co = TlsEnginePair.ClientOptions();
        co.Certificate = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, "client", TlsTestCertificates.OtherRoot);
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.RequestClientCertificate = true;
        using var p = new TlsEnginePair(co, so);
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.UnknownCa, p.Server.Alert);
    }

    [Fact]
    public void Alpn_NoOverlap_NoApplicationProtocol()
    {
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.ApplicationProtocols = [new SslApplicationProtocol("hq-interop")];
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), so);
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.NoApplicationProtocol, p.Server.Alert);
        Assert.Equal((TransportErrorCode)0x178, p.Server.ErrorCode);
    }

    [Fact]
    public void Alpn_ServerPreferenceWins()
    {
        var co = TlsEnginePair.ClientOptions();
        co.ApplicationProtocols = [new SslApplicationProtocol("a"), new SslApplicationProtocol("b")];
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.ApplicationProtocols = [new SslApplicationProtocol("b"), new SslApplicationProtocol("a")];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run());
        Assert.Equal("b", p.Client.NegotiatedApplicationProtocol.ToString());
    }

    [Fact]
    public void ExpiredCertificate_CertificateExpired()
    {
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), TlsEnginePair.ServerOptions(TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, expired: true)));
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.CertificateExpired, p.Client.Alert);
        Assert.Equal((TransportErrorCode)0x12d, p.Client.ErrorCode);
        // SslStream's words, naming the chain status.
        Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: NotTimeValid", p.Client.ErrorReason);
    }

    [Fact]
    public void UntrustedCa_UnknownCa()
    {
        X509Certificate2 cert = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, "localhost", TlsTestCertificates.OtherRoot);
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), TlsEnginePair.ServerOptions(cert));
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.UnknownCa, p.Client.Alert);
        Assert.True(p.Client.PeerCertificatePolicyErrors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors));
        Assert.Equal("The remote certificate is invalid because of errors in the certificate chain: PartialChain", p.Client.ErrorReason);
    }

    [Fact]
    public void WrongHostName_BadCertificate()
    {
        var co = TlsEnginePair.ClientOptions();
        co.ServerName = "example.com";
        using var p = new TlsEnginePair(co, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.BadCertificate, p.Client.Alert);
        Assert.Equal(SslPolicyErrors.RemoteCertificateNameMismatch, p.Client.PeerCertificatePolicyErrors);
        Assert.Equal("The remote certificate is invalid according to the validation procedure: RemoteCertificateNameMismatch", p.Client.ErrorReason);
    }

    [Fact]
    public void ValidationCallback_CanAcceptUntrustedAndReject()
    {
        X509Certificate2 untrusted = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, "localhost", TlsTestCertificates.OtherRoot);
        SslPolicyErrors seen = SslPolicyErrors.None;
        object? sender = new object();
        var co = TlsEnginePair.ClientOptions();
        co.RemoteCertificateValidation = (s, cert, chain, errors) => { seen = errors; sender = s; return cert != null; };
        using (var p = new TlsEnginePair(co, TlsEnginePair.ServerOptions(untrusted)))
        {
            Assert.True(p.Run(), p.Client.ErrorReason);
            Assert.Equal(SslPolicyErrors.RemoteCertificateChainErrors, seen);
            Assert.Null(sender);
        }

        var co2 = TlsEnginePair.ClientOptions();
        co2.RemoteCertificateValidation = (_, _, _, _) => false;
        using var p2 = new TlsEnginePair(co2, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(p2.Run());
        Assert.Equal(TlsAlert.BadCertificate, p2.Client.Alert);
        // msquic's and SslStream's words for a callback that said no.
        Assert.Equal("The remote certificate was rejected by the provided RemoteCertificateValidationCallback.", p2.Client.ErrorReason);
    }

    [Fact]
    public void ServerCertificateSelector_BySni()
    {
        X509Certificate2 other = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, "other.test");
        var co = TlsEnginePair.ClientOptions();
        co.ServerName = "other.test";
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.ServerCertificateSelector = name => name == "other.test" ? other : null;
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.Equal("other.test", p.Server.ServerName);
        Assert.Equal(other.RawData, p.Client.PeerCertificate!.RawData);
    }

    [Fact]
    public void IntermediateCertificates_AreSentAndUsedForTheChain()
    {
        X509Certificate2 intermediate = TlsTestCertificates.CreateIntermediate();
        X509Certificate2 leaf = TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256, "localhost", intermediate);
        var so = TlsEnginePair.ServerOptions(leaf);
        using (var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), so))
        {
            // Without the intermediate the client cannot build a chain to the trusted root.
            Assert.False(p.Run());
            Assert.Equal(TlsAlert.UnknownCa, p.Client.Alert);
        }
        so = TlsEnginePair.ServerOptions(leaf);
        so.CertificateChain = new X509Certificate2Collection(intermediate);
        using var p2 = new TlsEnginePair(TlsEnginePair.ClientOptions(), so);
        Assert.True(p2.Run(), p2.Client.ErrorReason);
        Assert.Equal(SslPolicyErrors.None, p2.Client.PeerCertificatePolicyErrors);
    }

    [Fact]
    public void MissingTransportParameters_MissingExtension()
    {
        var co = TlsEnginePair.ClientOptions();
        co.LocalTransportParameters = null;
        using var p = new TlsEnginePair(co, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(p.Run());
        Assert.Equal(TlsAlert.MissingExtension, p.Server.Alert);
        Assert.Equal((TransportErrorCode)0x16d, p.Server.ErrorCode);

        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        so.LocalTransportParameters = null;
        using var p2 = new TlsEnginePair(TlsEnginePair.ClientOptions(), so);
        Assert.False(p2.Run());
        Assert.Equal(TlsAlert.MissingExtension, p2.Client.Alert);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(100)]
    public void ArbitraryFragmentation_Completes(int chunk)
    {
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), TlsEnginePair.ServerOptions(Cert(KeyKind.Rsa2048)));
        Assert.True(p.Run(chunk: chunk), p.Client.ErrorReason ?? p.Server.ErrorReason);
        AssertSecretsAgree(p);
    }

    [Fact]
    public void ClientHelloAtWrongLevel_UnexpectedMessage()
    {
        var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        byte[] ch = client.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(server.ProcessCryptoData(EncryptionLevel.Handshake, ch));
        Assert.Equal(TlsAlert.UnexpectedMessage, server.Alert);
        Assert.Equal((TransportErrorCode)0x10a, server.ErrorCode);

        var server2 = new TlsHandshake(true, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(server2.ProcessCryptoData(EncryptionLevel.EarlyData, ch));
        Assert.Equal(TlsAlert.UnexpectedMessage, server2.Alert);
    }

    [Fact]
    public void ClientLegacySessionIdIsEmpty()
    {
        var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        byte[] ch = client.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        Assert.Equal(0, ch[4 + 2 + 32]); // legacy_session_id length (RFC 9001 §8.4)
    }

    [Fact]
    public void KeyUpdateAndEndOfEarlyData_UnexpectedMessage()
    {
        foreach (byte type in new byte[] { (byte)HandshakeType.KeyUpdate, (byte)HandshakeType.EndOfEarlyData })
        {
            using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
            Assert.True(p.Run());
            byte[] msg = type == (byte)HandshakeType.KeyUpdate ? [type, 0, 0, 1, 0] : [type, 0, 0, 0];
            Assert.False(p.Client.ProcessCryptoData(EncryptionLevel.OneRtt, msg));
            Assert.Equal(TlsAlert.UnexpectedMessage, p.Client.Alert);
        }
    }

    [Fact]
    public void OversizedMessage_CryptoBufferExceeded()
    {
        var server = new TlsHandshake(true, TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256)));
        Assert.False(server.ProcessCryptoData(EncryptionLevel.Initial, new byte[] { 1, 0x10, 0, 0, 3, 3 }));
        Assert.Equal(TransportErrorCode.CryptoBufferExceeded, server.ErrorCode);
        Assert.Null(server.Alert);
    }

    [Fact]
    public void ServerFinishedTampered_DecryptError()
    {
        var co = TlsEnginePair.ClientOptions();
        var so = TlsEnginePair.ServerOptions(Cert(KeyKind.EcdsaP256));
        var client = new TlsHandshake(false, co);
        var server = new TlsHandshake(true, so);
        Assert.True(client.Start());
        Assert.True(server.ProcessCryptoData(EncryptionLevel.Initial, client.GetPendingOutput(EncryptionLevel.Initial)));
        Assert.True(client.ProcessCryptoData(EncryptionLevel.Initial, server.GetPendingOutput(EncryptionLevel.Initial)));
        byte[] flight = server.GetPendingOutput(EncryptionLevel.Handshake).ToArray();
        flight[^1] ^= 1; // last byte of the server Finished verify_data
        Assert.False(client.ProcessCryptoData(EncryptionLevel.Handshake, flight));
        Assert.Equal(TlsAlert.DecryptError, client.Alert);
    }
}
