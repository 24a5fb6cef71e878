using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

public class ConnectionRobustnessTests(ITestOutputHelper output)
{
    /// <summary>
    /// Thousands of random and mutated datagrams (bit flips, truncations, forged headers with real connection
    /// IDs, random long-header Initials) are injected at both endpoints during a transfer. Nothing throws, the transfer
    /// either completes or the connection closes with a transport error, and the endpoints' state stays bounded.
    /// </summary>
    [Theory]
    [InlineData(900, false)]
    [InlineData(901, false)]
    [InlineData(902, true)]
    [InlineData(903, true)]
    public void FuzzedDatagramsDuringATransfer(int seed, bool fromTheFirstPacket)
    {
        var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 1 << 20 };
        using var pair = new QuicPair(seed, link);
        var random = new Random(seed);
        int injected = 0, maxServerConnections = 0, maxServerRoutes = 0, maxClientRoutes = 0;
        DatagramInterceptor fuzz = d =>
        {
            if (injected >= 6000) return InterceptAction.Pass;
            for (int k = 0; k < 2; k++)
            {
                byte[] fake = Mutate(d.ToArray(), random);
                SimAddress to = random.Next(4) == 0 ? d.From : d.To; // mostly towards the real receiver, sometimes back
                SimAddress from = to == d.To ? d.From : d.To;
                pair.Network.Inject(from, to, fake, d.NowUs + random.Next(0, 20_000));
                injected++;
            }
            return InterceptAction.Pass;
        };
        // Either the handshake itself (Initial and Handshake packets mutated and forged) or only the 1-RTT transfer is fuzzed.
        if (fromTheFirstPacket) pair.Network.Interceptor = fuzz;
        Assert.True(pair.Handshake());
        pair.Network.Interceptor = fuzz;
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        const long total = 2 << 20;
        var transfer = new StreamTransfer(pair, client, server, total);
        pair.RunUntil(() =>
        {
            maxServerConnections = Math.Max(maxServerConnections, pair.ServerEndpoint.Connections.Count);
            maxServerRoutes = Math.Max(maxServerRoutes, pair.ServerEndpoint.RouteCount);
            maxClientRoutes = Math.Max(maxClientRoutes, pair.ClientEndpoint.RouteCount);
            return transfer.Step() || client.Phase != ConnectionPhase.Open || server.Phase != ConnectionPhase.Open;
        }, 60_000_000);
        output.WriteLine($"injected {injected}; transfer {transfer.Received}/{total} fin={transfer.ReceivedFin}; client {client.Phase} {client.Error}; " +
            $"server {server.Phase} {server.Error}; max server connections {maxServerConnections}, routes {maxServerRoutes}/{maxClientRoutes}; " +
            $"dropped client {client.Statistics.PacketsDropped} server {server.Statistics.PacketsDropped}");
        Assert.True(injected >= 3000, $"only {injected} injected");
        Assert.False(transfer.Corrupted);
        if (!transfer.ReceivedFin)
        {
            Connection closed = client.Phase != ConnectionPhase.Open ? client : server;
            Assert.Equal(ConnectionErrorSource.Transport, closed.Error!.Source);
        }
        Assert.InRange(maxServerConnections, 1, 1);
        Assert.InRange(maxServerRoutes, 1, 10);
        Assert.InRange(maxClientRoutes, 1, 10);
    }

    private static byte[] Mutate(byte[] original, Random random)
    {
        switch (random.Next(6))
        {
            case 0: // one bit flipped
                original[random.Next(original.Length)] ^= (byte)(1 << random.Next(8));
                return original;
            case 1: // a few bytes overwritten
                for (int i = random.Next(1, 8); i > 0; i--) original[random.Next(original.Length)] = (byte)random.Next(256);
                return original;
            case 2: // truncated
                return original.AsSpan(0, random.Next(1, original.Length)).ToArray();
            case 3: // header kept (real connection ID), payload random
            {
                int keep = Math.Min(original.Length, 1 + 8 + random.Next(4));
                byte[] bytes = new byte[random.Next(keep, 1500)];
                original.AsSpan(0, keep).CopyTo(bytes);
                random.NextBytes(bytes.AsSpan(keep));
                return bytes;
            }
            case 4: // a forged long-header Initial of version 1, big enough to be a client's first
            {
                byte[] bytes = new byte[random.Next(1200, 1400)];
                random.NextBytes(bytes);
                bytes[0] = (byte)(0xC0 | random.Next(4));
                bytes[1] = 0; bytes[2] = 0; bytes[3] = 0; bytes[4] = 1;
                bytes[5] = (byte)random.Next(8, 21);
                return bytes;
            }
            default: // random garbage of any size
            {
                byte[] bytes = new byte[random.Next(1, 1500)];
                random.NextBytes(bytes);
                return bytes;
            }
        }
    }

    /// <summary>The same seed gives the same run, here a whole transfer over a lossy, reordering link.</summary>
    [Theory]
    [InlineData(910)]
    [InlineData(911)]
    public void SameSeedGivesTheSameTransfer(int seed)
    {
        (ulong Fingerprint, long EndUs, long Lost) Run()
        {
            var link = new LinkConditions { DelayUs = 10_000, BandwidthBitsPerSecond = 50_000_000, QueueLimitBytes = 500_000,
                LossProbability = 0.03, ReorderProbability = 0.05, ReorderExtraDelayUs = 3_000, JitterUs = 500 };
            using var pair = new QuicPair(seed, link);
            pair.Network.TraceEnabled = true;
            Assert.True(pair.Handshake());
            var transfer = new StreamTransfer(pair, pair.ClientConnection!, pair.ServerConnection!, 1 << 20);
            transfer.Run(30_000_000);
            Assert.True(transfer.ReceivedFin && !transfer.Corrupted);
            return (pair.Network.TraceFingerprint(), transfer.EndUs, pair.ClientConnection!.Statistics.PacketsLost);
        }
        var first = Run();
        var second = Run();
        output.WriteLine($"fingerprint {first.Fingerprint:x16}, end {first.EndUs} us, lost {first.Lost}");
        Assert.True(first.Lost > 0);
        Assert.Equal(first, second);
    }
}
