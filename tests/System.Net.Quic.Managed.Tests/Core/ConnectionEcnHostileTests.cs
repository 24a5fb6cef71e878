using System.Net.Quic.Managed.Core;
using System.Net.Quic.Managed.Recovery;
using System.Net.Quic.Managed.Tests.Wire;
using System.Net.Quic.Managed.Wire;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Hostile ACK_ECN frames (type 0x03) reaching a connection: boundary and random counts, mutated encodings. The connection
/// never throws, closes only with the codes RFC 9000 prescribes, and lying counts end ECN validation instead of being
/// taken as congestion.
/// </summary>
public class ConnectionEcnHostileTests
{
    private static QuicPair NewPair(int seed)
    {
        var pair = new QuicPair(seed, new LinkConditions { DelayUs = 10_000 });
        pair.Client.EcnCapable = true;
        pair.Server.EcnCapable = true;
        Assert.True(pair.Handshake());
        return pair;
    }

    [Fact]
    public void HostileAckEcnFramesAreHandledSafely()
    {
        var mutator = new InputMutator(1515);
        Random random = mutator.Random;
        long[] interesting = [0, 1, 2, 1000, (1L << 62) - 1];
        int seed = 1520;
        QuicPair pair = NewPair(seed);
        int closes = 0, failedValidations = 0, processed = 0;
        byte[] buffer = new byte[256];
        try
        {
            for (int i = 0; i < 300; i++)
            {
                Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
                Assert.True(client.TryOpenStream(unidirectional: true, out long stream));
                client.WriteStream(stream, new byte[] { 1, 2, 3 }, fin: true);
                pair.Network.PollAll();
                long largest = client.Recovery.GetTracker(PacketNumberSpace.ApplicationData).LargestSent;
                var counts = new EcnCounts(Pick(), Pick(), Pick());
                var writer = new QuicWriter(buffer);
                Assert.True(AckFrame.TryWrite(ref writer, [new AckRange(largest, largest)], 0, counts));
                byte[] frame = writer.Written.ToArray();
                if (random.Next(3) == 0) frame = mutator.Mutate(frame);
                if (frame.Length == 0) continue;
                server.SendRawFramesForTesting(frame);
                pair.RunUntil(() => false, 30_000);
                processed++;

                if (client.Phase != ConnectionPhase.Open)
                {
                    // A mutated frame may be malformed or acknowledge a packet never sent: those, and only those, close.
                    Assert.True(client.Error!.Code is (ulong)TransportErrorCode.FrameEncodingError or (ulong)TransportErrorCode.ProtocolViolation, client.Error.ToString());
                    closes++;
                    pair.Dispose();
                    pair = NewPair(++seed);
                    continue;
                }
                if (client.Ecn.State == EcnValidationState.Failed)
                {
                    failedValidations++;
                    // Validation failed: nothing is marked any more (and CE counts are ignored, see the test below).
                    Assert.Equal(0, client.OutgoingEcn);
                    pair.Dispose();
                    pair = NewPair(++seed);
                }
            }
        }
        finally
        {
            pair.Dispose();
        }
        Assert.True(processed > 250 && failedValidations > 10, $"{processed} frames, {failedValidations} failed validations, {closes} closes");

        long Pick() => random.Next(2) == 0 ? interesting[random.Next(interesting.Length)] : random.Next(0, 200);
    }

    [Fact]
    public void ALyingCeCountIsNotCongestion()
    {
        using QuicPair pair = NewPair(1519);
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        Assert.True(client.TryOpenStream(unidirectional: true, out long stream));
        client.WriteStream(stream, new byte[] { 1 }, fin: true);
        pair.Network.PollAll();
        long largest = client.Recovery.GetTracker(PacketNumberSpace.ApplicationData).LargestSent;
        long window = client.CongestionController.CongestionWindow;
        byte[] buffer = new byte[64];
        var writer = new QuicWriter(buffer);
        Assert.True(AckFrame.TryWrite(ref writer, [new AckRange(largest, largest)], 0,
            new EcnCounts(0, 0, (1L << 62) - 1)));
        server.SendRawFramesForTesting(writer.Written);
        pair.RunUntil(() => false, 30_000);
        Assert.Equal(ConnectionPhase.Open, client.Phase);
        Assert.Equal(EcnValidationState.Failed, client.Ecn.State);
        Assert.Equal(0, client.Ecn.CongestionSignals);
        Assert.Equal(long.MaxValue, client.CongestionController.SlowStartThreshold);
        Assert.True(client.CongestionController.CongestionWindow >= window);
    }
}
