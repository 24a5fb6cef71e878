using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Streams;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>
/// Two sans-IO endpoints (client and server, real TLS) wired back to back in memory with a virtual clock that jumps to
/// the next timer only when nothing moves: what is measured is the transport's own processing, not sockets or sleeps.
/// </summary>
internal sealed class InMemoryCorePair : IDisposable
{
    private static readonly NetworkAddress s_clientAddress = NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Loopback, 50000));
    private static readonly NetworkAddress s_serverAddress = NetworkAddress.FromEndPoint(new IPEndPoint(IPAddress.Loopback, 4433));
    private static readonly SslApplicationProtocol s_alpn = new("bench");

    private readonly byte[] _buffer = new byte[65536];
    private readonly Endpoint _clientEndpoint;
    private readonly Endpoint _serverEndpoint;
    private long _nowUs;

    private sealed class Factory : IServerConnectionFactory
    {
        private readonly ConnectionOptions _options;
        private readonly X509Certificate2 _certificate;

        public Factory(ConnectionOptions options, X509Certificate2 certificate)
        {
            _options = options;
            _certificate = certificate;
        }

        public bool TryCreate(in IncomingConnectionRequest request, out ConnectionOptions options, out ICryptoHandshake handshake)
        {
            options = _options;
            handshake = new TlsCryptoHandshake(true, new TlsHandshakeOptions { Certificate = _certificate, ApplicationProtocols = new() { s_alpn } });
            return true;
        }
    }

    public InMemoryCorePair(X509Certificate2 certificate, StreamTableOptions streams)
    {
        var options = new ConnectionOptions { Streams = streams, MaxDatagramSize = 1452, IdleTimeoutUs = 600_000_000 };
        _serverEndpoint = new Endpoint(new EndpointOptions { IsServer = true }, new Factory(options, certificate));
        _clientEndpoint = new Endpoint(new EndpointOptions { IsServer = false });
        Client = _clientEndpoint.Connect(options, new TlsCryptoHandshake(false, new TlsHandshakeOptions
        {
            ServerName = "localhost",
            ApplicationProtocols = new() { s_alpn },
            RemoteCertificateValidation = static (_, _, _, _) => true,
        }), s_serverAddress, _nowUs);
        Run(() => Server is { IsHandshakeComplete: true } && Client.IsHandshakeConfirmed, _ => { });
        if (Server is null) throw new InvalidOperationException("The in-memory handshake did not complete.");
    }

    public Connection Client { get; }

    public Connection? Server { get; private set; }

    /// <summary>Moves datagrams both ways and fires timers until <paramref name="done"/> holds; <paramref name="app"/> runs after every exchange.</summary>
    public void Run(Func<bool> done, Action<InMemoryCorePair> app)
    {
        for (long rounds = 0; !done(); rounds++)
        {
            if (rounds > 50_000_000) throw new InvalidOperationException("The in-memory exchange did not finish.");
            bool moved = Pump(_clientEndpoint, _serverEndpoint, s_clientAddress);
            moved |= Pump(_serverEndpoint, _clientEndpoint, s_serverAddress);
            if (Server is null && _serverEndpoint.TryAccept(out Connection accepted)) Server = accepted;
            app(this);
            if (moved) continue;
            long next = Math.Min(_clientEndpoint.NextTimeoutUs, _serverEndpoint.NextTimeoutUs);
            if (next == long.MaxValue) throw new InvalidOperationException("Nothing to send and no timer: the exchange is stuck.");
            _nowUs = Math.Max(_nowUs, next);
            _clientEndpoint.OnTimeout(_nowUs);
            _serverEndpoint.OnTimeout(_nowUs);
        }
    }

    private bool Pump(Endpoint from, Endpoint to, in NetworkAddress fromAddress)
    {
        bool moved = false;
        while (from.TrySend(_buffer, _nowUs, out OutgoingDatagram datagram))
        {
            moved = true;
            int segment = datagram.SegmentSize > 0 ? datagram.SegmentSize : datagram.Length;
            for (int offset = 0; offset < datagram.Length; offset += segment)
            {
                to.Receive(_buffer.AsSpan(offset, Math.Min(segment, datagram.Length - offset)), fromAddress, _nowUs);
            }
        }
        return moved;
    }

    public void Dispose()
    {
        _clientEndpoint.Dispose();
        _serverEndpoint.Dispose();
    }
}
