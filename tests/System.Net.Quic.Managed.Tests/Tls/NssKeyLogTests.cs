using System.Net.Quic.Managed.Diagnostics;
using System.Net.Quic.Managed.Tls;

namespace System.Net.Quic.Managed.Tests.Tls;

public class NssKeyLogTests
{
    [Fact]
    public void BothSidesLogEverySecretWithTheClientRandom()
    {
        var clientLines = new List<string>();
        var serverLines = new List<string>();
        TlsHandshakeOptions client = TlsEnginePair.ClientOptions();
        client.KeyLog = clientLines.Add;
        TlsHandshakeOptions server = TlsEnginePair.ServerOptions(TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256));
        server.KeyLog = serverLines.Add;
        var pair = new TlsEnginePair(client, server);
        Assert.True(pair.Run());

        string random = Convert.ToHexStringLower(pair.Client.ClientRandom!);
        Assert.Equal(random, Convert.ToHexStringLower(pair.Server.ClientRandom!));
        foreach (List<string> lines in new[] { clientLines, serverLines })
        {
            Assert.Equal(new[] { "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0" },
                lines.Select(l => l.Split(' ')[0]).Order().ToArray());
            Assert.All(lines, l => Assert.Equal(random, l.Split(' ')[1]));
        }
        // The logged values are the secrets the engine handed to the transport.
        foreach (TlsTrafficSecret s in pair.ClientSecrets)
        {
            string line = clientLines.Single(l => l.StartsWith(NssKeyLog.Label(s.Level, s.IsClientSecret) + " ", StringComparison.Ordinal));
            Assert.Equal(Convert.ToHexStringLower(s.Secret), line.Split(' ')[2]);
        }
    }

    [Fact]
    public void KeyLoggingIsOffByDefault()
    {
        var pair = new TlsEnginePair(TlsEnginePair.ClientOptions(), TlsEnginePair.ServerOptions(TlsTestCertificates.CreateLeaf(TlsTestCertificates.KeyKind.EcdsaP256)));
        Assert.True(pair.Run());
        Assert.Null(TlsEnginePair.ClientOptions().KeyLog);
    }

    [Fact]
    public void KeyLogFileAppendsLinesFromManyThreads()
    {
        string path = Path.Combine(Path.GetTempPath(), $"keylog-{Guid.NewGuid():N}.txt");
        try
        {
            var file = new KeyLogFile(path);
            Parallel.For(0, 200, i => file.WriteLine($"CLIENT_TRAFFIC_SECRET_0 {i:x64} {i:x64}"));
            string[] lines = File.ReadAllLines(path);
            Assert.Equal(200, lines.Length);
            Assert.All(lines, l => Assert.Equal(3, l.Split(' ').Length));
        }
        finally
        {
            File.Delete(path);
        }
    }
}
