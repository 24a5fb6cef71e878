using QuicManaged.Interop.Runner;
using QuicManaged.Interop.Serving;

namespace System.Net.Quic.Managed.Tests.Http3;

public class InteropRunnerTests
{
    private static Func<string, string?> Env(Dictionary<string, string> values) => name => values.TryGetValue(name, out string? v) ? v : null;

    [Fact]
    public void Configuration_ReadsRunnerEnvironment()
    {
        InteropConfiguration? config = InteropConfiguration.TryRead(Env(new()
        {
            ["ROLE"] = "client",
            ["TESTCASE"] = "http3",
            ["REQUESTS"] = "https://server4:443/a.bin  https://server4:443/b.bin",
            ["DOWNLOADS"] = "/downloads",
            ["INTEROP_TIMEOUT_SECONDS"] = "5",
        }), out string? error);
        Assert.Null(error);
        Assert.NotNull(config);
        Assert.True(config.IsClient);
        Assert.Equal(2, config.Requests.Count);
        Assert.Equal("/b.bin", config.Requests[1].AbsolutePath);
        Assert.Equal("::", config.Host);
        Assert.Equal(443, config.Port);
        Assert.Equal(TimeSpan.FromSeconds(5), config.Timeout);
    }

    [Theory]
    [InlineData("ROLE", "peer")]
    [InlineData("REQUESTS", "http://insecure/x")]
    [InlineData("PORT", "70000")]
    [InlineData("INTEROP_TIMEOUT_SECONDS", "0")]
    public void Configuration_RejectsInvalidValues(string name, string value)
    {
        Dictionary<string, string> env = new() { ["ROLE"] = "server", ["TESTCASE"] = "handshake" };
        env[name] = value;
        Assert.Null(InteropConfiguration.TryRead(Env(env), out string? error));
        Assert.NotNull(error);
    }

    [Fact]
    public void TestCases_MapAlpnLikeTheRunner()
    {
        Assert.Equal("h3", InteropTestCase.Find("http3")!.Alpn);
        foreach (InteropTestCase testCase in InteropTestCase.All)
        {
            Assert.Equal(testCase.Name == "http3" ? "h3" : "hq-interop", testCase.Alpn);
        }

        Assert.Null(InteropTestCase.Find("ecn"));
    }

    [Theory]
    [InlineData("client", "no-such-case")]
    [InlineData("server", "no-such-case")]
    public async Task UnsupportedTestCase_Exits127(string role, string testCase)
    {
        InteropConfiguration config = InteropConfiguration.TryRead(Env(new() { ["ROLE"] = role, ["TESTCASE"] = testCase }), out _)!;
        Assert.Equal(127, await InteropEndpointRunner.RunAsync(config, TextWriter.Null, CancellationToken.None));
    }

    [Fact]
    public async Task SupportedTestCase_WithoutTransport_FailsNonZero()
    {
        string downloads = Path.Combine(Path.GetTempPath(), "h3-cfg-" + Guid.NewGuid().ToString("N"));
        try
        {
            InteropConfiguration config = InteropConfiguration.TryRead(Env(new()
            {
                ["ROLE"] = "client",
                ["TESTCASE"] = "transfer",
                ["REQUESTS"] = "https://127.0.0.1:4433/x",
                ["DOWNLOADS"] = downloads,
            }), out _)!;
            // The transport reports IsSupported = false today; the endpoint must not claim success.
            int code = await InteropEndpointRunner.RunAsync(config, TextWriter.Null, CancellationToken.None);
            Assert.NotEqual(0, code);
            Assert.NotEqual(127, code);
        }
        finally
        {
            if (Directory.Exists(downloads))
            {
                Directory.Delete(downloads, true);
            }
        }
    }

    [Theory]
    [InlineData("/a.txt", true)]
    [InlineData("/dir/a.txt?q=1", true)]
    [InlineData("/../a", false)]
    [InlineData("/a/../../b", false)]
    [InlineData("/%2e%2e/b", false)]
    [InlineData("/a%5cb", false)]
    [InlineData("/a%00b", false)]
    [InlineData("//abs", false)]
    [InlineData("/", false)]
    [InlineData("a.txt", false)]
    public void FileRoot_MapsOnlyPlainRelativePaths(string path, bool expected)
    {
        Assert.Equal(expected, FileRoot.TryMapToRelative(path, out _));
    }
}
