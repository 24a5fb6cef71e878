using System.Net.Security;
using System.Security.Cryptography;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using P = System.Net.Quic;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>Our managed transport against System.Net.Quic (msquic) in the same process, both roles.</summary>
public class PlatformInteropTests
{
    private static void RequireMsQuic() => Skip.IfNot(QuicProviderSelection.IsSupported(QuicProvider.MsQuic), MsQuicSkipReason);

    [SkippableFact]
    public async Task ManagedClientAgainstMsQuicServer()
    {
        RequireMsQuic();
        CancellationToken ct = new CancellationTokenSource(TimeSpan.FromSeconds(20)).Token;
        await using P.QuicListener listener = await P.QuicListener.ListenAsync(new P.QuicListenerOptions
        {
            ListenEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
            ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
            ConnectionOptionsCallback = (_, _, _) => ValueTask.FromResult(new P.QuicServerConnectionOptions
            {
                DefaultStreamErrorCode = 1,
                DefaultCloseErrorCode = 2,
                ServerAuthenticationOptions = new SslServerAuthenticationOptions
                {
                    ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
                    ServerCertificate = ServerCertificate,
                },
            }),
        }, ct);
        Task echo = Task.Run(async () =>
        {
            await using P.QuicConnection server = await listener.AcceptConnectionAsync(ct);
            await using P.QuicStream s = await server.AcceptInboundStreamAsync(ct);
            byte[] request = await ReadToEndAsync(s, ct);
            await s.WriteAsync(request, completeWrites: true, ct);
            await s.WritesClosed.WaitAsync(ct);
        });
        await using QuicConnection client = await ConnectAsync(QuicProvider.Managed, ClientOptions(listener.LocalEndPoint), ct);
        await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        byte[] payload = RandomNumberGenerator.GetBytes(300_000);
        await stream.WriteAsync(payload, completeWrites: true, ct);
        Assert.Equal(payload, await ReadToEndAsync(stream, ct));
        await echo;
    }

    [SkippableFact]
    public async Task MsQuicClientAgainstManagedServer()
    {
        RequireMsQuic();
        CancellationToken ct = new CancellationTokenSource(TimeSpan.FromSeconds(20)).Token;
        await using QuicListener listener = await ListenAsync(QuicProvider.Managed);
        Task echo = Task.Run(async () =>
        {
            await using QuicConnection server = await listener.AcceptConnectionAsync(ct);
            await using QuicStream s = await server.AcceptInboundStreamAsync(ct);
            byte[] request = await ReadToEndAsync(s, ct);
            await s.WriteAsync(request, completeWrites: true, ct);
            await s.WritesClosed.WaitAsync(ct);
            // msquic's client drops what it has not read yet when the peer closes (docs/ARCHITECTURE.md): the server
            // closes only after the client is done, as an application speaking to msquic must.
            await Assert.ThrowsAsync<QuicException>(async () => await server.AcceptInboundStreamAsync(ct));
        });
        await using P.QuicConnection client = await P.QuicConnection.ConnectAsync(new P.QuicClientConnectionOptions
        {
            RemoteEndPoint = listener.LocalEndPoint,
            DefaultStreamErrorCode = 1,
            DefaultCloseErrorCode = 2,
            ClientAuthenticationOptions = new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ApplicationProtocols = new List<SslApplicationProtocol> { new("test") },
                RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null,
            },
        }, ct);
        await using P.QuicStream stream = await client.OpenOutboundStreamAsync(P.QuicStreamType.Bidirectional, ct);
        byte[] payload = RandomNumberGenerator.GetBytes(300_000);
        await stream.WriteAsync(payload, completeWrites: true, ct);
        Assert.Equal(payload, await ReadToEndAsync(stream, ct));
        await client.CloseAsync(0, ct);
        await echo;
    }
}
