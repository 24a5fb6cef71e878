// Echo client over QuicManaged: sends a message on a new stream and prints what comes back.
// Usage: EchoClient [port] [message]. The sample trusts the server's self-signed certificate: do not do that in production.
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Text;

int port = args.Length > 0 ? int.Parse(args[0]) : 5001;
string message = args.Length > 1 ? args[1] : "hello over QUIC";

await using QuicConnection connection = await QuicConnection.ConnectAsync(new QuicClientConnectionOptions
{
    RemoteEndPoint = new IPEndPoint(IPAddress.Loopback, port),
    DefaultStreamErrorCode = 1,
    DefaultCloseErrorCode = 0,
    ClientAuthenticationOptions = new SslClientAuthenticationOptions
    {
        TargetHost = "localhost",
        ApplicationProtocols = [new SslApplicationProtocol("echo")],
        RemoteCertificateValidationCallback = (_, _, _, _) => true,
    },
});
Console.WriteLine($"connected to {connection.RemoteEndPoint} ({connection.NegotiatedApplicationProtocol}, {connection.NegotiatedCipherSuite})");

await using QuicStream stream = await connection.OpenOutboundStreamAsync(QuicStreamType.Bidirectional);
await stream.WriteAsync(Encoding.UTF8.GetBytes(message), completeWrites: true);
using var reader = new StreamReader(stream, Encoding.UTF8);
string echoed = await reader.ReadToEndAsync();
Console.WriteLine($"echo: {echoed}");
await connection.CloseAsync(0);
return echoed == message ? 0 : 1;
