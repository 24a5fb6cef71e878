using System.Net.Quic.Managed.Core;
using System.Net.Security;
using static System.Net.Quic.Managed.Tests.Api.QuicApiTestEnvironment;
using System.Net.Quic.Managed.Bridge;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// <see cref="QuicConnectionOptions.CongestionControlAlgorithm"/>: validated like the other options, mapped to
/// the core's controller, and a BBR connection transfers byte-exact on loopback. The msquic provider ignores the
/// option (System.Net.Quic has no congestion-control setting), so the transfer case runs on both providers.
/// </summary>
public class CongestionControlApiTests
{
    public static TheoryData<string> Providers => new() { "managed", "msquic" };

    private static QuicClientConnectionOptions Client() => new()
    {
        RemoteEndPoint = new IPEndPoint(IPAddress.Loopback, 4433),
        DefaultStreamErrorCode = 1,
        DefaultCloseErrorCode = 2,
        ClientAuthenticationOptions = new SslClientAuthenticationOptions { TargetHost = "localhost", ApplicationProtocols = [new("test")] },
    };

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(int.MaxValue)]
    public void UndefinedAlgorithmIsRejectedAtConnectAndOnTheServer(int value)
    {
        QuicClientConnectionOptions client = Client();
        client.CongestionControlAlgorithm = (QuicCongestionControlAlgorithm)value;
        // Synchronously from the call, before any async work, as for the other options.
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => { _ = QuicConnection.ConnectAsync(client); });
        Assert.Equal("options", e.ParamName);
        Assert.Contains("'CongestionControlAlgorithm' should be Cubic, NewReno or Bbr.", e.Message);
        var server = new QuicServerConnectionOptions { DefaultStreamErrorCode = 1, DefaultCloseErrorCode = 2, CongestionControlAlgorithm = (QuicCongestionControlAlgorithm)value };
        Assert.Contains("CongestionControlAlgorithm", Assert.Throws<ArgumentOutOfRangeException>(() => server.Validate("options")).Message);
    }

    [Theory]
    [InlineData(QuicCongestionControlAlgorithm.Cubic, (int)CongestionControlAlgorithm.Cubic)]
    [InlineData(QuicCongestionControlAlgorithm.NewReno, (int)CongestionControlAlgorithm.NewReno)]
    [InlineData(QuicCongestionControlAlgorithm.Bbr, (int)CongestionControlAlgorithm.Bbr)]
    public void EachAlgorithmMapsToTheCoreController(QuicCongestionControlAlgorithm algorithm, int expectedCore)
    {
        var expected = (CongestionControlAlgorithm)expectedCore;
        QuicClientConnectionOptions o = Client();
        o.CongestionControlAlgorithm = algorithm;
        o.Validate("options");
        Assert.Equal(expected, ManagedOptionsMapping.ToConnectionOptions(o, new IPEndPoint(IPAddress.Loopback, 443), "test", 4096).CongestionControl);
        Assert.Equal(QuicCongestionControlAlgorithm.Cubic, new QuicClientConnectionOptions().CongestionControlAlgorithm);
        Assert.Equal(CongestionControlAlgorithm.Cubic, new ConnectionOptions().CongestionControl);
    }

    [SkippableTheory]
    [MemberData(nameof(Providers))]
    public async Task BbrConnectionTransfersByteExact(string provider)
    {
        await WithConnectedPairAsync(provider, async (client, server, ct) =>
        {
            byte[] payload = new byte[4 * 1024 * 1024];
            new Random(1515).NextBytes(payload);
            // Server to client: the server's BBR sends the bulk.
            await using QuicStream request = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
            await request.WriteAsync(new byte[] { 1 }, completeWrites: true, ct);
            await using QuicStream accepted = await server.AcceptInboundStreamAsync(ct);
            Assert.Equal([1], await ReadToEndAsync(accepted, ct));
            Task write = Task.Run(async () => await accepted.WriteAsync(payload, completeWrites: true, ct), ct);
            byte[] received = await ReadToEndAsync(request, ct);
            await write;
            Assert.Equal(payload.Length, received.Length);
            Assert.True(payload.AsSpan().SequenceEqual(received), "payload differs");
        }, s => s.CongestionControlAlgorithm = QuicCongestionControlAlgorithm.Bbr, c => c.CongestionControlAlgorithm = QuicCongestionControlAlgorithm.Bbr);
    }
}
