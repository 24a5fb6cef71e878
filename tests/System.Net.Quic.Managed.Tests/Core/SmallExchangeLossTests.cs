using System.Net.Quic.Managed.Core;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// Request/response exchanges of 1 KiB on fresh streams under random loss (the study saw some never finish):
/// every exchange must complete well within the time a few PTOs allow.
/// </summary>
public class SmallExchangeLossTests
{
    [Theory]
    [InlineData(0.01, 60)]
    [InlineData(0.05, 61)]
    [InlineData(0.05, 62)]
    [InlineData(0.10, 63)]
    [InlineData(-0.05, 64)] // negative: the same at 5 % with the real TLS engine
    [InlineData(-0.05, 65)]
    public void SmallExchangesCompleteUnderLoss(double loss, int seed)
    {
        bool realTls = loss < 0;
        loss = Math.Abs(loss);
        using var pair = new QuicPair(seed, new LinkConditions { DelayUs = 20_000, LossProbability = loss }, configure: p =>
        {
            if (realTls) ConnectionTlsTests.UseRealTls(p);
        });
        Assert.True(pair.Handshake(60_000_000));
        Connection client = pair.ClientConnection!, server = pair.ServerConnection!;
        byte[] request = new byte[1024];
        byte[] buffer = new byte[4096];
        for (int exchange = 0; exchange < 30; exchange++)
        {
            Assert.True(client.TryOpenStream(false, out long id));
            Assert.Equal(request.Length, client.WriteStream(id, request, fin: true));
            pair.Network.PollAll();
            int serverRead = 0, clientRead = 0;
            bool replied = false, done = false;
            long start = pair.Network.NowUs;
            pair.RunUntil(() =>
            {
                while (server.TryDequeueEvent(out _)) { }
                while (client.TryDequeueEvent(out _)) { }
                if (!replied && server.Streams.TryGetStream(id, out _))
                {
                    serverRead += server.ReadStream(id, buffer, out bool fin, out _, out _);
                    if (fin && serverRead == request.Length)
                    {
                        Assert.Equal(1024, server.WriteStream(id, request, fin: true));
                        replied = true;
                        pair.Network.PollAll();
                    }
                }
                if (replied)
                {
                    clientRead += client.ReadStream(id, buffer, out bool fin, out _, out _);
                    done = fin && clientRead == request.Length;
                }
                return done;
            }, 20_000_000);
            Assert.True(done, $"exchange {exchange} (stream {id}) did not finish in 20 s: server read {serverRead}, replied {replied}, client read {clientRead}; " +
                $"client lost {client.Statistics.PacketsLost}, pto {client.Recovery.PtoCount}, server pto {server.Recovery.PtoCount}");
            Assert.True(pair.Network.NowUs - start < 10_000_000, $"exchange {exchange} took {(pair.Network.NowUs - start) / 1000} ms");
        }
    }
}
