using System.Net.Quic.Managed.Core;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Core;

/// <summary>
/// The interop "handshakeloss" case in simulation: 30 % random loss each way, 10 ms each way, the real TLS engine,
/// 300 seeded handshakes. quic-go's client gives up after 10 s, and with PTO backoff (1, 2, 4 s...) every round that
/// brings the server's flight no further costs dearly. RFC 9002 §6.2.3 (the server resends its unacknowledged CRYPTO
/// data at once when the client repeats its ClientHello) and §6.2.4 (a PTO probe also carries the other handshake
/// space's unacknowledged CRYPTO data, and both probe datagrams carry it rather than one and a bare PING) cut the
/// handshakes slower than 3 s from 35 to 17 of 300 (mean 957 -> 740 ms) when they were added; the bound below sits
/// between the two.
/// </summary>
public class HandshakeUnderHeavyLossTests(ITestOutputHelper output)
{
    [Fact]
    public void FewHandshakesUnderThirtyPercentLossNeedMoreThanThreeSeconds()
    {
        const int runs = 300;
        long total = 0, worst = 0;
        int over3s = 0;
        var incomplete = new List<int>();
        for (int seed = 1000; seed < 1000 + runs; seed++)
        {
            var link = new LinkConditions { DelayUs = 10_000, LossProbability = 0.3 };
            using var pair = new QuicPair(seed, link, configure: p => ConnectionTlsTests.UseRealTls(p));
            pair.ClientOptions = new ConnectionOptions { HandshakeTimeoutUs = 60_000_000, Random = pair.ClientOptions.Random };
            pair.Network.TraceEnabled = false;
            pair.Connect();
            pair.RunUntil(() => pair.ClientConnection!.IsHandshakeComplete || pair.ClientConnection.Phase != ConnectionPhase.Open, 30_000_000);
            long took = pair.Network.NowUs;
            if (!pair.ClientConnection!.IsHandshakeComplete) incomplete.Add(seed);
            total += took;
            worst = Math.Max(worst, took);
            if (took > 3_000_000) over3s++;
        }
        output.WriteLine($"{runs} handshakes: mean {total / runs / 1000} ms, {over3s} over 3 s, worst {worst / 1000} ms");
        Assert.Empty(incomplete);
        Assert.True(over3s <= 26, $"{over3s} of {runs} handshakes took over 3 s (mean {total / runs / 1000} ms, worst {worst / 1000} ms)");
    }
}
