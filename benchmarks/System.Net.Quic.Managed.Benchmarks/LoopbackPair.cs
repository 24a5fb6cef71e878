using System.Security.Cryptography.X509Certificates;
using QuicManaged.Tools.QuicPerf.Transport;

namespace System.Net.Quic.Managed.Benchmarks;

/// <summary>A loopback server of one provider (the QuicPerf transports) plus its certificate, for a benchmark's GlobalSetup.</summary>
internal sealed class LoopbackPair : IDisposable
{
    private readonly X509Certificate2 _certificate;

    private LoopbackPair(PerfTransport transport, X509Certificate2 certificate)
    {
        Transport = transport;
        _certificate = certificate;
    }

    public PerfTransport Transport { get; }

    public static LoopbackPair Start(PerfTransportKind kind, bool rsaCertificate = false)
    {
        if (!PerfTransport.IsAvailable(kind, out string reason))
        {
            throw new PlatformNotSupportedException($"{PerfTransport.DisplayName(kind)}: {reason}");
        }
        X509Certificate2 certificate = SelfSignedCertificate.Create(rsaCertificate);
        PerfTransport transport = PerfTransport.Create(kind);
        var options = new PerfTransportOptions { Certificate = certificate, MaxInboundStreams = 1000 };
        transport.StartAsync(options, CancellationToken.None).GetAwaiter().GetResult();
        return new LoopbackPair(transport, certificate);
    }

    public PerfClientConnection Connect() => Transport.ConnectAsync(CancellationToken.None).GetAwaiter().GetResult();

    public void Dispose()
    {
        Transport.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _certificate.Dispose();
    }
}
