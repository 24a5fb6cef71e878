using System.Net.Quic.Managed.Crypto;
using System.Net.Quic.Managed.Tls;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tests.Tls;

/// <summary>Two engines wired directly in memory: each flight is handed to the peer at the level it was produced at.</summary>
internal sealed class TlsEnginePair : IDisposable
{
    public readonly TlsHandshake Client;
    public readonly TlsHandshake Server;
    public readonly List<TlsTrafficSecret> ClientSecrets = new();
    public readonly List<TlsTrafficSecret> ServerSecrets = new();
    /// <summary>Every flight in order: (from client?, level, bytes) - used by the mutation tests.</summary>
    public readonly List<(bool FromClient, EncryptionLevel Level, byte[] Data)> Flights = new();

    public TlsEnginePair(TlsHandshakeOptions clientOptions, TlsHandshakeOptions serverOptions)
    {
        Client = new TlsHandshake(false, clientOptions);
        Server = new TlsHandshake(true, serverOptions);
    }

    public static TlsHandshakeOptions ClientOptions(int seed = 1) => new()
    {
        ServerName = "localhost",
        ApplicationProtocols = { new SslApplicationProtocol("h3") },
        LocalTransportParameters = [0x01, 0x02, 0x03],
        CertificateChainPolicy = TlsTestCertificates.TrustRoot(TlsTestCertificates.Root),
        Random = new SeededRandomSource(seed),
    };

    public static TlsHandshakeOptions ServerOptions(X509Certificate2 certificate, int seed = 2) => new()
    {
        Certificate = certificate,
        ApplicationProtocols = { new SslApplicationProtocol("h3") },
        LocalTransportParameters = [0x0a, 0x0b],
        CertificateChainPolicy = TlsTestCertificates.TrustRoot(TlsTestCertificates.Root),
        Random = new SeededRandomSource(seed),
    };

    /// <summary>Runs the handshake to completion or failure; returns true if both sides completed.</summary>
    public bool Run(long nowUs = 0, int chunk = int.MaxValue)
    {
        if (!Client.Start(nowUs)) return false;
        for (int round = 0; round < 20; round++)
        {
            bool moved = Move(Client, Server, true, nowUs, chunk) | Move(Server, Client, false, nowUs, chunk);
            Drain(Client, ClientSecrets);
            Drain(Server, ServerSecrets);
            if (Client.HasFailed || Server.HasFailed) return false;
            if (!moved) break;
        }
        return Client.IsHandshakeComplete && Server.IsHandshakeComplete;
    }

    private static void Drain(TlsHandshake h, List<TlsTrafficSecret> into)
    {
        while (h.TryDequeueSecret(out TlsTrafficSecret s)) into.Add(s);
    }

    private bool Move(TlsHandshake from, TlsHandshake to, bool fromClient, long nowUs, int chunk)
    {
        bool moved = false;
        foreach (EncryptionLevel level in new[] { EncryptionLevel.Initial, EncryptionLevel.Handshake, EncryptionLevel.OneRtt })
        {
            byte[] data = from.GetPendingOutput(level).ToArray();
            if (data.Length == 0) continue;
            from.ConsumeOutput(level, data.Length);
            Flights.Add((fromClient, level, data));
            moved = true;
            if (to.HasFailed || from.HasFailed) continue;
            for (int i = 0; i < data.Length; i += chunk)
            {
                if (!to.ProcessCryptoData(level, data.AsSpan(i, Math.Min(chunk, data.Length - i)), nowUs)) break;
            }
        }
        return moved;
    }

    public void Dispose()
    {
        Client.Dispose();
        Server.Dispose();
    }
}
