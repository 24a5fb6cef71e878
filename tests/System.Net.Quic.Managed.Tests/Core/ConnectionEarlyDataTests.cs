using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tests.Tls;
using System.Net.Quic.Managed.Tls;
using System.Net.Quic.Managed.Wire;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Session resumption and 0-RTT through the core with the real TLS engine (RFC 9001 §4.6, RFC 9000 §7.4.1): a first
/// connection gets a ticket, a second resumes with it and sends stream data before its handshake completes.
/// </summary>
public class ConnectionEarlyDataTests
{
    private static readonly X509Certificate2 s_certificate = TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256);
    private static readonly byte[] s_ticketKey = Enumerable.Range(1, 32).Select(i => (byte)i).ToArray();

    private sealed class Setup
    {
        public bool ServerAcceptsEarlyData = true;
        public TlsSessionTicket? Ticket;
        public bool OfferEarlyData = true;
    }

    private static void Configure(QuicPair pair, Setup setup)
    {
        int seed = pair.Seed;
        int connections = 0;
        pair.ServerHandshakeFactory = () => new TlsCryptoHandshake(true, new TlsHandshakeOptions
        {
            Certificate = s_certificate,
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
            Random = new SeededRandomSource(seed * 7 + 1 + 100 * connections++),
            SessionTicketKey = s_ticketKey,
            EnableEarlyData = setup.ServerAcceptsEarlyData,
        });
        pair.ClientHandshakeFactory = () => new TlsCryptoHandshake(false, new TlsHandshakeOptions
        {
            ServerName = "localhost",
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
            RemoteCertificateValidation = (_, _, _, _) => true,
            Random = new SeededRandomSource(seed * 7 + 2 + 100 * connections++),
            SessionTicket = setup.Ticket,
            OfferEarlyData = setup.OfferEarlyData,
        });
    }

    /// <summary>Runs a first full handshake and returns the ticket it left (with the server's transport parameters).</summary>
    private static TlsSessionTicket FirstConnection(QuicPair pair)
    {
        Assert.True(pair.Handshake());
        Assert.False(pair.ClientConnection!.Handshake.IsResumed);
        TlsSessionTicket? ticket = null;
        pair.RunUntil(() => pair.ClientConnection.TryTakeSessionTicket(out ticket), 2_000_000);
        Assert.NotNull(ticket);
        Assert.True(ticket!.AllowsEarlyData);
        Assert.NotNull(ticket.PeerTransportParameters);
        pair.ClientConnection.Close(0, "done", pair.Network.NowUs);
        pair.RunUntil(() => false, 1_000_000);
        return ticket;
    }

    private static ConnectionOptions EarlyOptions(QuicPair pair, TlsSessionTicket ticket, long firstFlightHoldUs = 0) => new()
    {
        Random = new SeededRandomSource(pair.Seed * 2 + 11),
        Name = "client-resumed",
        MaxDatagramSize = 1452,
        Streams = QuicPair.DefaultStreams,
        EarlyDataTransportParameters = ticket.PeerTransportParameters,
        EarlyDataFirstFlightHoldUs = firstFlightHoldUs,
    };

    private static byte[] Payload(int length)
    {
        byte[] data = new byte[length];
        for (int i = 0; i < data.Length; i++) data[i] = (byte)(i * 31 + 7);
        return data;
    }

    /// <summary>Reads the first peer-opened stream of <paramref name="receiver"/> until FIN; null if it never finishes.</summary>
    private static byte[]? ReadWhole(QuicPair pair, Func<Connection?> receiver, long maxUs)
    {
        long streamId = -1;
        var received = new MemoryStream();
        bool fin = false;
        byte[] buffer = new byte[8192];
        pair.RunUntil(() =>
        {
            Connection? c = receiver();
            if (c is null) return false;
            while (c.TryDequeueEvent(out ConnectionEvent e))
            {
                if (e.Kind == ConnectionEventKind.StreamOpened && streamId < 0) streamId = e.StreamId;
            }
            while (streamId >= 0 && !fin)
            {
                int n = c.ReadStream(streamId, buffer, out fin, out bool reset, out _);
                Assert.False(reset);
                received.Write(buffer, 0, n);
                if (n == 0) break;
            }
            return fin;
        }, maxUs);
        return fin ? received.ToArray() : null;
    }

    [Fact]
    public void ResumedConnectionSendsStreamDataInZeroRttAndTheServerAcceptsIt()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 60, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket);

        Connection client = pair.ConnectAgain();
        Assert.True(client.CanSendEarlyData); // keys ready with the ClientHello: no round trip needed
        Assert.False(client.IsHandshakeComplete);
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        byte[] request = Payload(3000);
        Assert.Equal(request.Length, client.WriteStream(id, request, fin: true));

        byte[]? atServer = ReadWhole(pair, () => pair.ServerConnection, 5_000_000);
        Assert.Equal(request, atServer);
        Assert.True(client.Statistics.ZeroRttPacketsSent > 0);
        Assert.True(pair.ServerConnection!.Statistics.ZeroRttPacketsReceived > 0);
        pair.RunUntil(() => client.IsHandshakeComplete, 2_000_000);
        Assert.True(client.Handshake.IsResumed);
        Assert.True(client.Handshake.EarlyDataAccepted);
        Assert.True(pair.ServerConnection.Handshake.EarlyDataAccepted);
        Assert.False(client.Statistics.ZeroRttRejected);
        Assert.False(client.CanSendEarlyData);
    }

    /// <summary>
    /// 0-RTT in QUIC v2 (RFC 9369: v2 labels for the 0-RTT keys, v2 packet types), and 0-RTT sent in v1 by a client a
    /// server then moves to v2 (RFC 9368): the v1 0-RTT packets are unreadable in v2, so the client sends their data again
    /// in 1-RTT and the request still arrives whole.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ZeroRttInVersion2(bool upgradedFromVersion1)
    {
        var setup = new Setup();
        uint[] both = { QuicVersion.V1, QuicVersion.V2 };
        using var pair = new QuicPair(seed: 64, configure: p =>
        {
            Configure(p, setup);
            p.ServerPreferredVersions = upgradedFromVersion1 ? new[] { QuicVersion.V2, QuicVersion.V1 } : null;
            p.ClientOptions = new ConnectionOptions
            {
                Random = new SeededRandomSource(64 * 2 + 1),
                Name = "client",
                MaxDatagramSize = 1452,
                Streams = QuicPair.DefaultStreams,
                Version = upgradedFromVersion1 ? QuicVersion.V1 : QuicVersion.V2,
                AvailableVersions = upgradedFromVersion1 ? both : null,
            };
        });
        setup.Ticket = FirstConnection(pair);
        Assert.Equal(QuicVersion.V2, pair.ClientConnection!.Version);
        ConnectionOptions early = EarlyOptions(pair, setup.Ticket);
        pair.ClientOptions = new ConnectionOptions
        {
            Random = early.Random,
            Name = early.Name,
            MaxDatagramSize = early.MaxDatagramSize,
            Streams = early.Streams,
            EarlyDataTransportParameters = early.EarlyDataTransportParameters,
            Version = upgradedFromVersion1 ? QuicVersion.V1 : QuicVersion.V2,
            AvailableVersions = upgradedFromVersion1 ? both : null,
        };

        Connection client = pair.ConnectAgain();
        Assert.True(client.CanSendEarlyData);
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        byte[] request = Payload(3000);
        Assert.Equal(request.Length, client.WriteStream(id, request, fin: true));
        byte[]? atServer = ReadWhole(pair, () => pair.ServerConnection, 5_000_000);
        Assert.Equal(request, atServer);
        pair.RunUntil(() => client.IsHandshakeComplete, 2_000_000);
        Assert.Equal(QuicVersion.V2, client.Version);
        Assert.Equal(QuicVersion.V2, pair.ServerConnection!.Version);
        Assert.True(client.Handshake.IsResumed);
        Assert.True(client.Statistics.ZeroRttPacketsSent > 0);
        if (upgradedFromVersion1) Assert.Equal(0, pair.ServerConnection.Statistics.ZeroRttPacketsReceived);
        else Assert.True(pair.ServerConnection.Statistics.ZeroRttPacketsReceived > 0);
    }

    [Fact]
    public void ZeroRttDataArrivesBeforeTheServerHandshakeCompletes()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 61, link: new LinkConditions { DelayUs = 25_000 }, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket);

        Connection client = pair.ConnectAgain();
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        client.WriteStream(id, "GET /\r\n"u8, fin: true);
        bool dataBeforeHandshake = false;
        pair.RunUntil(() =>
        {
            if (pair.ServerConnection is not { } server) return false;
            if (server.Streams.Count > 0) dataBeforeHandshake = !server.IsHandshakeComplete;
            return server.Streams.Count > 0;
        }, 2_000_000);
        Assert.True(dataBeforeHandshake, "the request should reach the server half a round trip before the client's Finished");
    }

    [Fact]
    public void RejectedZeroRttIsResentInOneRttPackets()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 62, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        setup.ServerAcceptsEarlyData = false; // e.g. the server's anti-replay state was lost
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket);

        Connection client = pair.ConnectAgain();
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        byte[] request = Payload(5000);
        Assert.Equal(request.Length, client.WriteStream(id, request, fin: true));

        byte[]? atServer = ReadWhole(pair, () => pair.ServerConnection, 5_000_000);
        Assert.Equal(request, atServer);
        Assert.True(client.Statistics.ZeroRttPacketsSent > 0);
        Assert.True(client.Statistics.ZeroRttRejected);
        Assert.Equal(0, pair.ServerConnection!.Statistics.ZeroRttPacketsReceived);
        Assert.True(client.Handshake.IsResumed); // resumption itself succeeded
        Assert.False(client.Handshake.EarlyDataAccepted);
    }

    [Fact]
    public void ServerAcceptingZeroRttWithLowerLimitsIsAProtocolViolation()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 63, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ServerOptions = new ConnectionOptions
        {
            Random = new SeededRandomSource(99),
            Name = "server-smaller",
            MaxDatagramSize = 1452,
            Streams = new System.Net.Quic.Managed.Streams.StreamTableOptions
            {
                InitialMaxData = 64 * 1024, // below the remembered 1 MiB
                InitialMaxStreamDataBidiLocal = 256 * 1024,
                InitialMaxStreamDataBidiRemote = 256 * 1024,
                InitialMaxStreamDataUni = 256 * 1024,
                MaxStreamsBidi = 100,
                MaxStreamsUni = 100,
            },
        };
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket);

        Connection client = pair.ConnectAgain();
        pair.RunUntil(() => client.Phase != ConnectionPhase.Open, 5_000_000);
        Assert.NotNull(client.Error);
        Assert.False(client.Error!.ByPeer);
        Assert.Equal((ulong)TransportErrorCode.ProtocolViolation, client.Error.Code); // RFC 9000 §7.4.1
    }

    [Fact]
    public void WithoutRememberedParametersNoZeroRttIsSentButResumptionWorks()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 64, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = new ConnectionOptions { Random = new SeededRandomSource(5), Name = "client-no-tp", MaxDatagramSize = 1452, Streams = QuicPair.DefaultStreams };

        Connection client = pair.ConnectAgain();
        Assert.False(client.CanSendEarlyData);
        Assert.False(client.TryOpenStream(unidirectional: false, out _)); // no limits known before the handshake
        pair.RunUntil(() => client.IsHandshakeComplete && pair.ServerConnection is { IsHandshakeComplete: true }, 5_000_000);
        Assert.True(client.Handshake.IsResumed);
        Assert.Equal(0, client.Statistics.ZeroRttPacketsSent);
    }

    [Fact]
    public void FirstFlightWaitsForTheFirstRequestSoBothLeaveInOneDatagram()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 65, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket, firstFlightHoldUs: 5_000);
        Connection client = pair.ConnectAgain();
        long start = pair.Network.NowUs;
        pair.RunUntil(() => false, 2_000); // the application is slow to write: nothing leaves meanwhile
        Assert.Equal(0, client.Statistics.DatagramsSent);
        Assert.Equal(start + 5_000, client.NextTimeoutUs);
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        client.WriteStream(id, "GET /index.html\r\n"u8, fin: true);
        pair.RunUntil(() => client.Statistics.DatagramsSent > 0, 1_000);
        Assert.Equal(1, client.Statistics.DatagramsSent); // ClientHello and request coalesced (RFC 9000 §12.2)
        Assert.Equal(1, client.Statistics.ZeroRttPacketsSent);
    }

    [Fact]
    public void FirstFlightHoldEndsAtItsDeadlineWithoutARequest()
    {
        var setup = new Setup();
        using var pair = new QuicPair(seed: 66, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket, firstFlightHoldUs: 5_000);
        Connection client = pair.ConnectAgain();
        long start = pair.Network.NowUs;
        pair.RunUntil(() => client.Statistics.DatagramsSent > 0, 1_000_000);
        Assert.InRange(pair.Network.NowUs - start, 5_000, 6_000);
        pair.RunUntil(() => client.IsHandshakeComplete, 2_000_000);
        Assert.True(client.IsHandshakeComplete);
    }

    [Theory]
    [InlineData(70)]
    [InlineData(71)]
    [InlineData(72)]
    [InlineData(73)]
    public void ZeroRttTransferSurvivesLossAndReordering(int seed)
    {
        var setup = new Setup();
        var lossy = new LinkConditions { DelayUs = 20_000, JitterUs = 5_000, AllowJitterReordering = true, LossProbability = 0.1 };
        using var pair = new QuicPair(seed, link: lossy, reverse: lossy, configure: p => Configure(p, setup));
        setup.Ticket = FirstConnection(pair);
        pair.ClientOptions = EarlyOptions(pair, setup.Ticket);

        Connection client = pair.ConnectAgain();
        Assert.True(client.TryOpenStream(unidirectional: false, out long id));
        byte[] request = Payload(60_000);
        Assert.Equal(request.Length, client.WriteStream(id, request, fin: true));
        byte[]? atServer = ReadWhole(pair, () => pair.ServerConnection, 30_000_000);
        Assert.True(atServer is not null, $"not finished: client {client.Phase} {client.Error?.Reason} hs={client.IsHandshakeComplete} zrttSent={client.Statistics.ZeroRttPacketsSent} rejected={client.Statistics.ZeroRttRejected} lost={client.Statistics.PacketsLost}; server {pair.ServerConnection?.Phase} {pair.ServerConnection?.Error?.Reason} zrttRecv={pair.ServerConnection?.Statistics.ZeroRttPacketsReceived} | c: dS={client.Statistics.DatagramsSent} dR={client.Statistics.DatagramsReceived} pR={client.Statistics.PacketsReceived} drop={client.Statistics.PacketsDropped} | s: dS={pair.ServerConnection?.Statistics.DatagramsSent} dR={pair.ServerConnection?.Statistics.DatagramsReceived} pR={pair.ServerConnection?.Statistics.PacketsReceived} drop={pair.ServerConnection?.Statistics.PacketsDropped} resumed={pair.ServerConnection?.Handshake.IsResumed} acc={pair.ServerConnection?.Handshake.EarlyDataAccepted}");
        Assert.Equal(request, atServer);
    }
}
