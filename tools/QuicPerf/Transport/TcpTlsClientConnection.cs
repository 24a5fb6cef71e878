using System.Net.Security;

namespace QuicManaged.Tools.QuicPerf.Transport;

public sealed class TcpTlsClientConnection : PerfClientConnection
{
    private readonly SslStream _stream;
    private bool _streamTaken;

    public TcpTlsClientConnection(SslStream stream) => _stream = stream;

    public override TlsCipherSuite NegotiatedCipherSuite => _stream.NegotiatedCipherSuite;

    public override ValueTask<Stream> OpenStreamAsync(CancellationToken cancellationToken)
    {
        if (_streamTaken) throw new InvalidOperationException("A TCP connection carries one stream; connect again for another.");
        _streamTaken = true;
        return ValueTask.FromResult<Stream>(_stream);
    }

    public override ValueTask DisposeAsync() => _stream.DisposeAsync();
}
