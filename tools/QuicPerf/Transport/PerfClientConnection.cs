using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

/// <summary>One client connection of a <see cref="PerfTransport"/>.</summary>
public abstract class PerfClientConnection : IAsyncDisposable
{
    public abstract TlsCipherSuite NegotiatedCipherSuite { get; }

    /// <summary>A new bidirectional QUIC stream; for TCP the connection's only stream (callable once).</summary>
    public abstract ValueTask<Stream> OpenStreamAsync(CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();
}
