using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>What both ends of a loopback transfer agree on.</summary>
public sealed class PerfTransportOptions
{
    public static readonly SslApplicationProtocol Alpn = new("perf");

    /// <summary>Loopback address to listen on and connect to (127.0.0.1 or ::1).</summary>
    public IPAddress Address { get; init; } = IPAddress.Loopback;

    /// <summary>Port the server listens on (0: any free one).</summary>
    public int Port { get; init; }

    /// <summary>Client: the server to connect to; null means this process's own server (loopback runs).</summary>
    public IPEndPoint? Remote { get; init; }

    /// <summary>Server certificate with private key (self-signed, generated in-process).</summary>
    public required X509Certificate2 Certificate { get; init; }

    /// <summary>When set, both ends offer only this TLS 1.3 suite.</summary>
    public TlsCipherSuite? CipherSuite { get; init; }

    /// <summary>Receive window per stream (QUIC) in bytes; the connection window is this times the stream count, at least 16 MiB.</summary>
    public int StreamReceiveWindow { get; init; } = 16 * 1024 * 1024;

    /// <summary>The managed provider's QuicConnectionOptions.MaxPathDatagramSize (0: its default); the msquic providers ignore it.</summary>
    public int MaxPathDatagramSize { get; init; }

    /// <summary>Inbound bidirectional streams the server allows at once.</summary>
    public int MaxInboundStreams { get; init; } = 1000;

    public int ConnectionReceiveWindow => Math.Max(StreamReceiveWindow, 16 * 1024 * 1024);

    public CipherSuitesPolicy? CreateCipherSuitesPolicy()
        => CipherSuite is { } suite ? new CipherSuitesPolicy(new[] { suite }) : null;

    public SslServerAuthenticationOptions CreateServerTlsOptions() => new()
    {
        ServerCertificate = Certificate,
        ApplicationProtocols = new List<SslApplicationProtocol> { Alpn },
        EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls13,
        CipherSuitesPolicy = CreateCipherSuitesPolicy(),
        ClientCertificateRequired = false,
    };

    public SslClientAuthenticationOptions CreateClientTlsOptions() => new()
    {
        TargetHost = "localhost",
        ApplicationProtocols = new List<SslApplicationProtocol> { Alpn },
        EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls13,
        CipherSuitesPolicy = CreateCipherSuitesPolicy(),
        // The certificate is self-signed and generated in this process: accept it.
        RemoteCertificateValidationCallback = static (_, _, _, _) => true,
    };
}
