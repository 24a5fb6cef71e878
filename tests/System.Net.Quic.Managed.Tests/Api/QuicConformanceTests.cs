using System.Diagnostics;
using System.Security.Authentication;
using System.Security.Cryptography;
using Xunit.Abstractions;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// System.Net.Quic semantics over loopback, for each provider: the managed transport always, msquic when libmsquic
/// loads (skipped with the reason otherwise).
/// </summary>
public class QuicConformanceTests
{
    private readonly ITestOutputHelper _output;

    public QuicConformanceTests(ITestOutputHelper output) => _output = output;

    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static CancellationToken Timeout(int seconds = 20) => new CancellationTokenSource(TimeSpan.FromSeconds(seconds)).Token;

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task EchoOnOneStream(string provider)
    {
        QuicProviderKind kind = Require(provider);
        await using QuicListener listener = await ListenAsync(kind);
        var (client, server) = await ConnectPairAsync(kind, listener);
        await using (client)
        await using (server)
        {
            Assert.Equal("test", client.NegotiatedApplicationProtocol.ToString());
            Assert.Equal("test", server.NegotiatedApplicationProtocol.ToString());
            Assert.Equal("localhost", server.TargetHostName);
            Assert.NotNull(client.RemoteCertificate);
            Assert.Equal(ServerCertificate.Thumbprint, ((System.Security.Cryptography.X509Certificates.X509Certificate2)client.RemoteCertificate!).Thumbprint);
            Assert.Equal(listener.LocalEndPoint.Port, client.RemoteEndPoint.Port);

            CancellationToken ct = Timeout();
            Task echo = Task.Run(async () =>
            {
                await using QuicStream s = await server.AcceptInboundStreamAsync(ct);
                Assert.Equal(QuicStreamType.Bidirectional, s.Type);
                byte[] request = await ReadToEndAsync(s, ct);
                await s.WriteAsync(request, completeWrites: true, ct);
                await s.WritesClosed.WaitAsync(ct);
            });
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            Assert.Equal(0, stream.Id);
            Assert.True(stream.CanRead && stream.CanWrite);
            byte[] payload = RandomNumberGenerator.GetBytes(100_000);
            await stream.WriteAsync(payload, completeWrites: true, ct);
            byte[] reply = await ReadToEndAsync(stream, ct);
            Assert.Equal(payload, reply);
            await stream.ReadsClosed.WaitAsync(ct);
            await echo;
        }
    }
}
