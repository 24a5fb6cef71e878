using System.Net.Quic.Managed.Tls;
using System.Security.Cryptography.X509Certificates;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Session tickets, PSK (psk_dhe_ke) resumption with binders, and 0-RTT acceptance rules.</summary>
public class TlsResumptionTests
{
    private static readonly Lazy<X509Certificate2> s_cert = new(() => TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256));
    private static readonly byte[] TicketKey = Enumerable.Range(1, 32).Select(i => (byte)i).ToArray();

    private static TlsHandshakeOptions Server(bool early = true, byte[]? key = null)
    {
        TlsHandshakeOptions o = TlsEnginePair.ServerOptions(s_cert.Value);
        o.SessionTicketKey = key ?? TicketKey;
        o.EnableEarlyData = early;
        return o;
    }

    private static TlsSessionTicket FirstConnectionTicket(bool early = true, long nowUs = 0)
    {
        using var p = new TlsEnginePair(TlsEnginePair.ClientOptions(), Server(early));
        Assert.True(p.Run(nowUs));
        Assert.False(p.Client.IsResumed);
        Assert.True(p.Client.TryDequeueSessionTicket(out TlsSessionTicket t));
        Assert.Equal(early, t.AllowsEarlyData);
        Assert.Equal(new byte[] { 0x0a, 0x0b }, t.PeerTransportParameters);
        Assert.Equal("h3", t.ApplicationProtocol.ToString());
        return t;
    }

    [Fact]
    public void FirstClientHello_WithoutTicket_AdvertisesPskDheKe()
    {
        // RFC 8446 §4.2.9: qtls (quic-go 0.29) derives the resumption secret only when the ClientHello lists psk_dhe_ke;
        // without it quic-go still issued a ticket, sealed with an empty secret, that it refused on the next connection.
        using var client = new TlsHandshake(false, TlsEnginePair.ClientOptions());
        Assert.True(client.Start());
        Assert.Null(ClientHello.TryDecode(client.GetPendingOutput(EncryptionLevel.Initial).Slice(4), out ClientHello ch));
        Assert.Equal(new byte[] { 1 }, ch.PskKeyExchangeModes);
        Assert.Empty(ch.PskIdentities);
        Assert.False(ch.EarlyData);
    }

    [Fact]
    public void Resumption_WithZeroRtt_Accepted()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 5);
        co.SessionTicket = ticket;
        co.OfferEarlyData = true;
        using var p = new TlsEnginePair(co, Server());
        Assert.True(p.Run(nowUs: 2_000_000), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.True(p.Client.IsResumed);
        Assert.True(p.Server.IsResumed);
        Assert.True(p.Client.EarlyDataAccepted);
        Assert.True(p.Server.EarlyDataAccepted);
        TlsTrafficSecret clientEarly = p.ClientSecrets.Single(s => s.Level == EncryptionLevel.EarlyData);
        TlsTrafficSecret serverEarly = p.ServerSecrets.Single(s => s.Level == EncryptionLevel.EarlyData);
        Assert.True(clientEarly.IsWrite);
        Assert.False(serverEarly.IsWrite);
        Assert.Equal(clientEarly.Secret, serverEarly.Secret);
        // The early secret is the first secret the client learns: it comes with the ClientHello.
        Assert.Equal(EncryptionLevel.EarlyData, p.ClientSecrets[0].Level);
        // A resumed handshake sends no Certificate.
        Assert.Null(p.Client.PeerCertificate);
        Assert.Equal(p.Client.ResumptionMasterSecret.ToArray(), p.Server.ResumptionMasterSecret.ToArray());
        byte[] cAp = p.ClientSecrets.Single(s => s.Level == EncryptionLevel.OneRtt && s.IsClientSecret).Secret;
        Assert.Equal(cAp, p.ServerSecrets.Single(s => s.Level == EncryptionLevel.OneRtt && s.IsClientSecret).Secret);
    }

    [Fact]
    public void Resumption_TicketWithoutEarlyData_ResumesWithout0Rtt()
    {
        TlsSessionTicket ticket = FirstConnectionTicket(early: false);
        var co = TlsEnginePair.ClientOptions(seed: 6);
        co.SessionTicket = ticket;
        co.OfferEarlyData = true;
        using var p = new TlsEnginePair(co, Server(early: false));
        Assert.True(p.Run(nowUs: 1_000_000));
        Assert.True(p.Client.IsResumed);
        Assert.False(p.Client.EarlyDataAccepted);
        Assert.DoesNotContain(p.ClientSecrets, s => s.Level == EncryptionLevel.EarlyData);
    }

    [Fact]
    public void Resumption_UnknownTicketKey_FullHandshake()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 7);
        co.SessionTicket = ticket;
        co.OfferEarlyData = true;
        using var p = new TlsEnginePair(co, Server(key: new byte[32]));
        Assert.True(p.Run(nowUs: 1_000_000), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.False(p.Client.IsResumed);
        Assert.False(p.Server.EarlyDataAccepted);
        Assert.False(p.Client.EarlyDataAccepted);
        Assert.NotNull(p.Client.PeerCertificate);
    }

    [Fact]
    public void Resumption_ExpiredTicket_NotOffered()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 8);
        co.SessionTicket = ticket;
        using var p = new TlsEnginePair(co, Server());
        Assert.True(p.Run(nowUs: (ticket.LifetimeSeconds + 1) * 1_000_000L));
        Assert.False(p.Client.IsResumed);
        Assert.False(p.Server.IsResumed);
    }

    [Fact]
    public void Resumption_AfterHelloRetryRequest_NoEarlyData()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 9);
        co.SessionTicket = ticket;
        co.OfferEarlyData = true;
        TlsHandshakeOptions so = Server();
        so.Groups = [NamedGroup.Secp256r1];
        using var p = new TlsEnginePair(co, so);
        Assert.True(p.Run(nowUs: 1_000_000), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.True(p.Client.HelloRetryRequestPerformed);
        Assert.True(p.Client.IsResumed);
        Assert.False(p.Server.EarlyDataAccepted);
        // The client computed an early secret for its first ClientHello but 0-RTT was not accepted.
        Assert.False(p.Client.EarlyDataAccepted);
    }

    [Fact]
    public void Resumption_TamperedBinder_DecryptError()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 10);
        co.SessionTicket = ticket;
        var client = new TlsHandshake(false, co);
        Assert.True(client.Start(1_000_000));
        byte[] ch = client.GetPendingOutput(EncryptionLevel.Initial).ToArray();
        ch[^1] ^= 0x80; // the binder is the last thing in the ClientHello
        var server = new TlsHandshake(true, Server());
        Assert.False(server.ProcessCryptoData(EncryptionLevel.Initial, ch, 1_000_000));
        Assert.Equal(TlsAlert.DecryptError, server.Alert);
    }

    [Fact]
    public void ZeroRtt_RefusedWhenTicketAgeIsImplausible()
    {
        TlsSessionTicket ticket = FirstConnectionTicket();
        var co = TlsEnginePair.ClientOptions(seed: 11);
        co.SessionTicket = ticket;
        co.OfferEarlyData = true;
        var client = new TlsHandshake(false, co);
        Assert.True(client.Start(1_000_000));
        var server = new TlsHandshake(true, Server());
        // The server sees the ClientHello a minute later than the client's clock suggests.
        Assert.True(server.ProcessCryptoData(EncryptionLevel.Initial, client.GetPendingOutput(EncryptionLevel.Initial), 61_000_000));
        Assert.True(server.IsResumed);
        Assert.False(server.EarlyDataAccepted);
    }
}
