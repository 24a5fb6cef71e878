using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Streams;

namespace System.Net.Quic.Managed.Tests.Simulation;

/// <summary>
/// Two real endpoints (client and server) on a seeded simulated network, like quinn-proto's test Pair. The TLS engine is
/// replaced by <see cref="FakeCryptoHandshake"/> unless a factory says otherwise; everything else is the production core.
/// </summary>
internal sealed class QuicPair : IDisposable
{
    public const int ClientHost = 1, ServerHost = 2;

    private sealed class ServerFactory : IServerConnectionFactory
    {
        private readonly QuicPair _pair;

        public ServerFactory(QuicPair pair) => _pair = pair;

        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        {
            options = _pair.ServerOptions;
            handshake = _pair.ServerHandshakeFactory();
            return true;
        }
    }

    public QuicPair(int seed, LinkConditions? link = null, LinkConditions? reverse = null, Action<QuicPair>? configure = null)
    {
        Seed = seed;
        Network = new SimulatedNetwork(seed);
        Link = Network.Connect(ClientHost, ServerHost, link ?? new LinkConditions { DelayUs = 10_000 }, reverse);
        ClientOptions = new ConnectionOptions { Random = new SeededRandomSource(seed * 2 + 1), Name = "client", MaxDatagramSize = 1452, Streams = DefaultStreams };
        ServerOptions = new ConnectionOptions { Random = new SeededRandomSource(seed * 2 + 2), Name = "server", MaxDatagramSize = 1452, Streams = DefaultStreams };
        configure?.Invoke(this);
        ServerEndpoint = CreateServerEndpoint();
        ClientEndpoint = new Endpoint(new EndpointOptions { IsServer = false, Random = new SeededRandomSource(seed * 2 + 4) });
        Server = new SimulatedQuicEndpoint(ServerEndpoint);
        Client = new SimulatedQuicEndpoint(ClientEndpoint);
        ServerAddress = new SimAddress(ServerHost, 443);
        ClientAddress = new SimAddress(ClientHost, 50000);
        Network.AddEndpoint(ServerAddress, Server);
        Network.AddEndpoint(ClientAddress, Client);
    }

    public static StreamTableOptions DefaultStreams => new()
    {
        InitialMaxData = 1 << 20,
        InitialMaxStreamDataBidiLocal = 256 * 1024,
        InitialMaxStreamDataBidiRemote = 256 * 1024,
        InitialMaxStreamDataUni = 256 * 1024,
        MaxStreamsBidi = 100,
        MaxStreamsUni = 100,
    };

    public int Seed { get; }
    public SimulatedNetwork Network { get; }
    public SimulatedLink Link { get; }
    public ConnectionOptions ClientOptions { get; set; }
    public ConnectionOptions ServerOptions { get; set; }
    public bool RequireRetry { get; set; }

    /// <summary>The QUIC versions the server endpoint speaks (Version Negotiation lists them).</summary>
    public uint[] ServerSupportedVersions { get; set; } = { System.Net.Quic.Managed.Wire.QuicVersion.V1, System.Net.Quic.Managed.Wire.QuicVersion.V2 };

    /// <summary>The server's preference for compatible version negotiation (RFC 9368); null: answer in the client's version.</summary>
    public uint[]? ServerPreferredVersions { get; set; }
    public Func<ICryptoHandshake> ServerHandshakeFactory { get; set; } = () => new FakeCryptoHandshake(isServer: true);
    public Func<ICryptoHandshake> ClientHandshakeFactory { get; set; } = () => new FakeCryptoHandshake(isServer: false);
    public Endpoint ServerEndpoint { get; private set; }

    /// <summary>The server endpoint's static stateless reset key (RFC 9000 §10.3.2), kept across <see cref="RestartServer"/>.</summary>
    public byte[]? ServerResetKey { get; set; }

    /// <summary>The server endpoint's address validation token key (fleet key: RFC 9000 §8.1.3), kept across <see cref="RestartServer"/>.</summary>
    public byte[]? ServerTokenKey { get; set; }

    /// <summary>The server endpoint's connection ID generator (QUIC-LB, worker tags); null: random IDs of 8 bytes.</summary>
    public System.Net.Quic.Managed.Ids.ConnectionIdGenerator? ServerConnectionIdGenerator { get; set; }

    private Endpoint CreateServerEndpoint()
        => new(new EndpointOptions
        {
            IsServer = true, Random = new SeededRandomSource(Seed * 2 + 3), RequireRetry = RequireRetry, StatelessResetKey = ServerResetKey,
            SupportedVersions = ServerSupportedVersions, PreferredVersions = ServerPreferredVersions, AddressValidationTokenKey = ServerTokenKey,
            ConnectionIdGenerator = ServerConnectionIdGenerator, ConnectionIdLength = ServerConnectionIdGenerator?.Length ?? 8,
        }, new ServerFactory(this));

    /// <summary>The server process restarts: a new endpoint at the same address, without any connection state.</summary>
    public void RestartServer()
    {
        ServerEndpoint.Dispose();
        ServerEndpoint = CreateServerEndpoint();
        Server.Endpoint = ServerEndpoint;
        ServerConnection = null;
    }
    public Endpoint ClientEndpoint { get; }
    public SimulatedQuicEndpoint Server { get; }
    public SimulatedQuicEndpoint Client { get; }
    public SimAddress ServerAddress { get; }
    public SimAddress ClientAddress { get; }
    public Connection? ClientConnection { get; private set; }
    public Connection? ServerConnection { get; private set; }

    public Connection Connect()
    {
        ClientConnection = ClientEndpoint.Connect(ClientOptions, ClientHandshakeFactory(), SimulatedQuicEndpoint.ToNetwork(ServerAddress), Network.NowUs);
        return ClientConnection;
    }

    /// <summary>A further client connection on the same pair (e.g. resuming the first): the next accepted one becomes <see cref="ServerConnection"/>.</summary>
    public Connection ConnectAgain()
    {
        ServerConnection = null;
        return Connect();
    }

    /// <summary>Runs until <paramref name="condition"/> holds or <paramref name="maxDurationUs"/> of virtual time passed.</summary>
    public SimRunResult RunUntil(Func<bool> condition, long maxDurationUs = 30_000_000)
        => Network.RunUntil(() =>
        {
            if (ServerConnection is null && ServerEndpoint.TryAccept(out Connection accepted)) ServerConnection = accepted;
            if (ClientConnection is { PreferredAddressMigrationPending: true } client) OnPreferredAddress(client);
            return condition();
        }, Network.NowUs + maxDurationUs);

    /// <summary>The server's preferred address (RFC 9000 §9.6), a second address of the server host; see <see cref="AddServerPreferredAddress"/>.</summary>
    public SimAddress ServerPreferredAddress { get; } = new(ServerHost, 8443);

    /// <summary>The client's address for its path to the preferred address (its second socket, local path 1).</summary>
    public SimAddress ClientPreferredPathAddress { get; } = new(ClientHost, 50100);

    /// <summary>
    /// Makes the server advertise <see cref="ServerPreferredAddress"/> and receive there (local path 1); call from the
    /// constructor's configure callback, before the endpoints exist, or right after it.
    /// </summary>
    public void AddServerPreferredAddress()
    {
        ServerOptions = new ConnectionOptions
        {
            Random = new SeededRandomSource(Seed * 2 + 2), Name = "server", MaxDatagramSize = 1452, Streams = DefaultStreams,
            PreferredAddressV4 = ServerPreferredAddress.ToIPEndPoint(), DisableActiveMigration = ServerOptions.DisableActiveMigration,
        };
        Server.AddPath(Network, 1, ServerPreferredAddress);
    }

    /// <summary>Preferred-address migrations the client started (the I/O layer's part, done here as the API layer does it).</summary>
    public int PreferredAddressMigrations { get; private set; }

    /// <summary>As the API layer: a socket of its own for the new path (local path 1), then the core validates and moves.</summary>
    private void OnPreferredAddress(Connection client)
    {
        Client.AddPath(Network, 1, ClientPreferredPathAddress);
        if (client.MigrateToPreferredAddress(1, Network.NowUs)) PreferredAddressMigrations++;
    }

    public bool Handshake(long maxDurationUs = 30_000_000)
    {
        Connect();
        RunUntil(() => ClientConnection!.IsHandshakeComplete && ServerConnection is { IsHandshakeComplete: true }, maxDurationUs);
        return ClientConnection!.IsHandshakeComplete && ServerConnection is { IsHandshakeComplete: true };
    }

    public void Dispose()
    {
        ClientEndpoint.Dispose();
        ServerEndpoint.Dispose();
    }
}
