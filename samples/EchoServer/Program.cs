// Echo server over QuicManaged: accepts connections (ALPN "echo") and writes back every stream it receives.
// Porting from System.Net.Quic is the using below. Usage: EchoServer [port] (default 5001; 0 picks one and prints it).
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

int port = args.Length > 0 ? int.Parse(args[0]) : 5001;
using X509Certificate2 certificate = CreateSelfSigned("localhost");

await using QuicListener listener = await QuicListener.ListenAsync(new QuicListenerOptions
{
    ListenEndPoint = new IPEndPoint(IPAddress.Loopback, port),
    ApplicationProtocols = [new SslApplicationProtocol("echo")],
    ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
    {
        DefaultStreamErrorCode = 1,
        DefaultCloseErrorCode = 0,
        ServerAuthenticationOptions = new SslServerAuthenticationOptions
        {
            ApplicationProtocols = [new SslApplicationProtocol("echo")],
            ServerCertificate = certificate,
        },
    }),
});
Console.WriteLine($"listening on {listener.LocalEndPoint}");

while (true)
{
    QuicConnection connection = await listener.AcceptConnectionAsync();
    _ = Task.Run(async () =>
    {
        await using (connection)
        {
            try
            {
                while (true)
                {
                    await using QuicStream stream = await connection.AcceptInboundStreamAsync();
                    await stream.CopyToAsync(stream); // read until the peer's FIN, writing each chunk back
                    stream.CompleteWrites();
                }
            }
            catch (QuicException e) when (e.QuicError is QuicError.ConnectionAborted or QuicError.ConnectionIdle)
            {
                // the client is done
            }
        }
    });
}

static X509Certificate2 CreateSelfSigned(string name)
{
    using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256);
    var san = new SubjectAlternativeNameBuilder();
    san.AddDnsName(name);
    request.CertificateExtensions.Add(san.Build());
    return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
}
