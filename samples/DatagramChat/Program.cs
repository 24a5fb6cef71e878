// Chat over QuicManaged with DATAGRAM (RFC 9221) beside a stream: messages go on a reliable stream, "is typing"
// presence pings go as unreliable datagrams (a lost ping does not matter: the next one replaces it).
// Runs a server and a client in one process on loopback. Usage: DatagramChat [message...].
// DATAGRAM is an extension of QuicManaged (System.Net.Quic has no datagram API): opt in with MaxDatagramFrameSize.
// The sample trusts its own self-signed certificate: do not do that in production.
using System.Net;
using System.Net.Quic.Managed;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;

string[] messages = args.Length > 0 ? args : ["hello", "datagrams ride beside streams"];
using X509Certificate2 certificate = CreateSelfSigned("localhost");
var alpn = new SslApplicationProtocol("chat");
using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
CancellationToken ct = timeout.Token;

await using QuicListener listener = await QuicListener.ListenAsync(new QuicListenerOptions
{
    ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
    ApplicationProtocols = [alpn],
    ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new QuicServerConnectionOptions
    {
        DefaultStreamErrorCode = 1,
        DefaultCloseErrorCode = 0,
        MaxDatagramFrameSize = 1500, // accept datagrams (advertises max_datagram_frame_size)
        ServerAuthenticationOptions = new SslServerAuthenticationOptions { ApplicationProtocols = [alpn], ServerCertificate = certificate },
    }),
}, ct);

// Server: prints presence datagrams as they come and echoes each chat line back on the stream.
Task server = Task.Run(async () =>
{
    await using QuicConnection connection = await listener.AcceptConnectionAsync(ct);
    _ = Task.Run(async () =>
    {
        try
        {
            while (true)
            {
                ReadOnlyMemory<byte> ping = await connection.ReceiveDatagramAsync(ct);
                Console.WriteLine($"server: presence datagram \"{Encoding.UTF8.GetString(ping.Span)}\"");
            }
        }
        catch (Exception e) when (e is QuicException or OperationCanceledException)
        {
            // the client left
        }
    }, ct);
    await using QuicStream stream = await connection.AcceptInboundStreamAsync(ct);
    using var reader = new StreamReader(stream, Encoding.UTF8, leaveOpen: true);
    while (await reader.ReadLineAsync(ct) is { } line)
    {
        await stream.WriteAsync(Encoding.UTF8.GetBytes($"ack: {line}\n"), ct);
    }
    stream.CompleteWrites();
    await stream.WritesClosed;
}, ct);

await using QuicConnection client = await QuicConnection.ConnectAsync(new QuicClientConnectionOptions
{
    RemoteEndPoint = listener.LocalEndPoint,
    DefaultStreamErrorCode = 1,
    DefaultCloseErrorCode = 0,
    ClientAuthenticationOptions = new SslClientAuthenticationOptions
    {
        TargetHost = "localhost",
        ApplicationProtocols = [alpn],
        RemoteCertificateValidationCallback = (_, _, _, _) => true,
    },
}, ct);
Console.WriteLine($"client: connected, datagrams up to {client.MaxDatagramSize} bytes");

await using QuicStream chat = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
using var replies = new StreamReader(chat, Encoding.UTF8, leaveOpen: true);
int acknowledged = 0;
foreach (string message in messages)
{
    // Presence first, unreliably: its fate is reported, nothing is retransmitted.
    QuicDatagramSendResult result = await client.SendDatagramAsync(Encoding.UTF8.GetBytes("client is typing"), ct);
    if (result == QuicDatagramSendResult.Acknowledged) acknowledged++;
    await chat.WriteAsync(Encoding.UTF8.GetBytes(message + "\n"), ct);
    Console.WriteLine($"client: {await replies.ReadLineAsync(ct)}");
}
chat.CompleteWrites();
Console.WriteLine($"client: {acknowledged} of {messages.Length} presence datagrams acknowledged, "
    + $"{client.GetStatistics().DatagramFramesLost} lost");
await replies.ReadToEndAsync(ct);
await server;
await client.CloseAsync(0, ct);
Console.WriteLine("chat done");
return 0;

static X509Certificate2 CreateSelfSigned(string name)
{
    using ECDsa key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256);
    var san = new SubjectAlternativeNameBuilder();
    san.AddDnsName(name);
    request.CertificateExtensions.Add(san.Build());
    return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
}
