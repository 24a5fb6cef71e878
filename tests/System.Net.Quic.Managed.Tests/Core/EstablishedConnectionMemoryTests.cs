using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Tests.Tls;
using KeyKind = System.Net.Quic.Managed.Tests.Tls.TlsTestCertificates.KeyKind;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// An established connection keeps nothing of its handshake that it will not use again: thousands of idle connections
/// on a server (or in a client process) each cost what the 1-RTT state needs. What the handshake leaves behind is
/// released when it stops being needed: the Initial and Handshake spaces' CRYPTO buffers, sent-packet rings and ACK
/// ranges when their keys are discarded (RFC 9001 §4.9), the TLS transcript and the lower levels' message buffers at
/// completion, and an endpoint's stateless-reset counters exist only once it sends a reset.
/// </summary>
public class EstablishedConnectionMemoryTests
{
    [Fact]
    public void DiscardedPacketNumberSpacesHoldNoBuffers()
    {
        using var pair = new QuicPair(seed: 6101);
        Assert.True(pair.Handshake());
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        // The client's Handshake space goes when HANDSHAKE_DONE confirms the handshake (RFC 9001 §4.1.2).
        pair.RunUntil(() => client.SpaceForTesting(PacketNumberSpace.Handshake).Discarded
            && server.SpaceForTesting(PacketNumberSpace.Handshake).Discarded, 2_000_000);

        foreach (Connection connection in new[] { client, server })
        {
            foreach (PacketNumberSpace id in new[] { PacketNumberSpace.Initial, PacketNumberSpace.Handshake })
            {
                PacketSpaceState space = connection.SpaceForTesting(id);
                string who = $"{(connection.IsServer ? "server" : "client")} {id}";
                Assert.True(space.Discarded, who);
                Assert.True(space.CryptoSend.AllocatedBytes == 0, $"{who}: CRYPTO send chunks {space.CryptoSend.AllocatedBytes} B");
                Assert.True(space.CryptoReceive.AllocatedBytes == 0, $"{who}: CRYPTO receive chunks {space.CryptoReceive.AllocatedBytes} B");
                Assert.True(connection.Recovery.GetTracker(id).Capacity == 1, $"{who}: sent-packet ring of {connection.Recovery.GetTracker(id).Capacity}");
            }
        }

        // The connection still works in the space that is left.
        Assert.True(client.TryOpenStream(unidirectional: false, out long id1));
        Assert.Equal(3000, client.WriteStream(id1, new byte[3000], fin: true));
        byte[] buffer = new byte[4000];
        int read = 0;
        pair.RunUntil(() =>
        {
            read += server.ReadStream(id1, buffer.AsSpan(read), out _, out _, out _);
            return read == 3000;
        }, 2_000_000);
        Assert.Equal(3000, read);
    }

    [Fact]
    public void CompletedTlsHandshakeKeepsNoTranscriptOrLowerLevelBuffers()
    {
        var co = TlsEnginePair.ClientOptions();
        var so = TlsEnginePair.ServerOptions(TlsTestCertificates.CreateLeaf(KeyKind.EcdsaP256));
        using var p = new TlsEnginePair(co, so);
        int clientBefore = p.Client.BufferedBytesForTesting;
        Assert.True(p.Run(), p.Client.ErrorReason ?? p.Server.ErrorReason);
        Assert.True(p.Client.IsHandshakeComplete && p.Server.IsHandshakeComplete);

        // Eight level buffers and the transcript at their 16-byte floor, plus the 1-RTT level's buffers as they are
        // (the server's holds the session ticket it sent until taken): well under what the certificate alone takes.
        Assert.True(p.Client.BufferedBytesForTesting <= clientBefore, $"client keeps {p.Client.BufferedBytesForTesting} B (started with {clientBefore} B)");
        Assert.True(p.Server.BufferedBytesForTesting <= 2 * 1024, $"server keeps {p.Server.BufferedBytesForTesting} B");
        // A session ticket still works afterwards: the resumption secret was derived before the transcript went.
        Assert.Equal(p.Client.ResumptionMasterSecret.ToArray(), p.Server.ResumptionMasterSecret.ToArray());
    }

    [Fact]
    public void StatelessResetCountersAreAllocatedWithTheFirstReset()
    {
        var limiter = new StatelessResetLimiter();
        Assert.False(limiter.HasCounters);
        Assert.True(limiter.TryAcquire(new NetworkAddress(new byte[] { 10, 0, 0, 1 }, 443), 1_000_000));
        Assert.True(limiter.HasCounters);
    }
}
