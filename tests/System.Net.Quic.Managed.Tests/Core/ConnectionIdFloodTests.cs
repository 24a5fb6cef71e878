using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Wire;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// CVE-2024-22189 class: a peer that keeps raising retire_prior_to, one NEW_CONNECTION_ID a packet, while never
/// acknowledging the RETIRE_CONNECTION_ID frames it forces us to send, must not make us pile up unacknowledged
/// retirements without bound. RFC 9000 §5.1.2 lets the receiver treat too many retirements outstanding as
/// CONNECTION_ID_LIMIT_ERROR, which is what neqo and quic-go do.
/// </summary>
public class ConnectionIdFloodTests(ITestOutputHelper output)
{
    [Fact]
    public void RetirePriorToFloodWithoutAcksClosesWithConnectionIdLimitError()
    {
        using var pair = new QuicPair(seed: 4242);
        Assert.True(pair.Handshake());
        pair.RunUntil(() => pair.ClientConnection!.IsHandshakeConfirmed, 1_000_000);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;

        // From now on the attacker (the server) hears nothing from the client: it acknowledges none of the client's
        // RETIRE_CONNECTION_ID frames. The client still hears every NEW_CONNECTION_ID.
        pair.Network.Interceptor = d => d.To.Host == QuicPair.ServerHost ? InterceptAction.Drop : InterceptAction.Pass;

        long startUs = pair.Network.NowUs;
        long closedUs = -1;
        int maxOutstanding = 0, maxRetirements = 0;
        const int FloodPackets = 2_000;
        // Sequence numbers far above the few the server issued itself during the handshake.
        for (ulong seq = 1_000; seq < 1_000 + FloodPackets && closedUs < 0; seq++)
        {
            // NEW_CONNECTION_ID seq, retire_prior_to = seq: every frame retires the ID before it (§19.15).
            var f = new RawFrameBuilder();
            f.VarInt(0x18).VarInt(seq).VarInt(seq).VarInt(8).Bytes(BitConverter.GetBytes(0x5566778899AABB00UL + seq));
            byte[] token = new byte[16];
            BitConverter.GetBytes(seq).CopyTo(token, 0);
            token[15] = 0xA5;
            f.Bytes(token);
            server.SendRawFramesForTesting(f.ToArray());
            pair.RunUntil(() =>
            {
                maxOutstanding = Math.Max(maxOutstanding, client.Recovery.GetTracker(PacketNumberSpace.ApplicationData).OutstandingCount);
                maxRetirements = Math.Max(maxRetirements, client.UnacknowledgedPeerIdRetirements);
                return client.Phase != ConnectionPhase.Open;
            }, 1_000);
            if (client.Phase != ConnectionPhase.Open) closedUs = pair.Network.NowUs;
        }

        output.WriteLine($"client closed after {(closedUs < 0 ? -1 : closedUs - startUs)} us; at most {maxOutstanding} packets outstanding, {maxRetirements} retirements unacknowledged; error {client.Error}");
        Assert.True(closedUs >= 0, "the flood never closed the connection");
        Assert.InRange(closedUs - startUs, 0, 1_000_000);
        Assert.NotNull(client.Error);
        Assert.Equal(ConnectionErrorSource.Transport, client.Error!.Source);
        Assert.Equal((ulong)TransportErrorCode.ConnectionIdLimitError, client.Error.Code);
        Assert.False(client.Error.ByPeer);
        // Memory stays bounded: the client never had more than a small number of packets awaiting acknowledgement.
        Assert.InRange(maxOutstanding, 0, 64);
        Assert.InRange(maxRetirements, 0, 4 * 4 + 1); // 4 x our active_connection_id_limit (4), plus the one that trips it
    }
}
