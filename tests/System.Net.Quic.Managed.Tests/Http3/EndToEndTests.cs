using QuicManaged.Http.Framing;
using System.Security.Cryptography;
using QuicManaged.Interop.HqInterop;
using QuicManaged.Interop.Http3;
using QuicManaged.Interop.Runner;
using QuicManaged.Interop.Serving;
using QuicManaged.Interop.Transport;

namespace System.Net.Quic.Managed.Tests.Http3;

public sealed class EndToEndTests : IDisposable
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);
    private readonly string _www;
    private readonly string _downloads;
    private readonly Dictionary<string, byte[]> _files = new();

    public EndToEndTests()
    {
        string root = Path.Combine(Path.GetTempPath(), "h3-e2e-" + Guid.NewGuid().ToString("N"));
        _www = Path.Combine(root, "www");
        _downloads = Path.Combine(root, "downloads");
        Directory.CreateDirectory(_www);
        Directory.CreateDirectory(_downloads);
        Random random = new(20261122);
        foreach ((string name, int size) in new[] { ("small.txt", 1000), ("medium.bin", 70_001), ("large.bin", 1 << 20), ("empty", 0) })
        {
            byte[] content = new byte[size];
            random.NextBytes(content);
            File.WriteAllBytes(Path.Combine(_www, name), content);
            _files[name] = content;
        }

        File.WriteAllText(Path.Combine(Path.GetDirectoryName(_www)!, "secret.txt"), "outside the root");
    }

    public void Dispose() => Directory.Delete(Path.GetDirectoryName(_www)!, recursive: true);

    private List<Uri> Urls(params string[] names) => names.Select(n => new Uri("https://server:4433/" + n)).ToList();

    private void AssertDownloadsMatch()
    {
        foreach ((string name, byte[] content) in _files)
        {
            string path = Path.Combine(_downloads, name);
            Assert.True(File.Exists(path), name);
            Assert.Equal(Convert.ToHexString(SHA256.HashData(content)), Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(path))));
        }
    }

    [Fact]
    public async Task Http3_DownloadsEveryFileConcurrently_Sha256Matches()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Http3Server h3Server = new(server, new FileRoot(_www));
        Task serverTask = h3Server.RunAsync(cts.Token);

        bool ok = await InteropDownloader.RunAsync(client, InteropTestCase.AlpnH3, Urls(_files.Keys.ToArray()), _downloads, TextWriter.Null, cts.Token);

        Assert.True(ok);
        AssertDownloadsMatch();
        await serverTask.WaitAsync(cts.Token);
        // The client closed gracefully (RFC 9114 §5.2: H3_NO_ERROR) and neither side saw a protocol error.
        Assert.Equal((long)Http3ErrorCode.NoError, server.PeerCloseErrorCode);
        Assert.Null(h3Server.Session.Failure);
        Http3Settings clientSettings = await h3Server.Session.PeerSettings;
        Assert.Equal(Http3Client.MaxFieldSectionSize, clientSettings.MaxFieldSectionSize);
    }

    [Fact]
    public async Task Http3_MissingFileAndTraversal_Are404()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Task serverTask = new Http3Server(server, new FileRoot(_www)).RunAsync(cts.Token);
        await using (Http3Client h3 = new(client))
        {
            await h3.StartAsync(cts.Token);
            foreach (string path in new[] { "/missing", "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/", "//etc/passwd" })
            {
                MemoryStream body = new();
                Http3Response response = await h3.GetAsync("server", path, body, cts.Token);
                Assert.Equal(404, response.StatusCode);
                Assert.Equal(0, body.Length);
            }

            MemoryStream ok = new();
            Assert.Equal(new Http3Response(200, 1000), await h3.GetAsync("server", "/small.txt?x=1", ok, cts.Token));
            Assert.Equal(_files["small.txt"], ok.ToArray());
            Http3Settings serverSettings = await h3.Session.PeerSettings;
            Assert.Equal(Http3Server.MaxFieldSectionSize, serverSettings.MaxFieldSectionSize);
            Assert.Equal(Http3Server.QpackMaxTableCapacity, serverSettings.QpackMaxTableCapacity);
        }

        await serverTask.WaitAsync(cts.Token);
    }

    /// <summary>
    /// A client whose QPACK encoder uses the server's dynamic table (RFC 9204): it inserts :path and :authority on its
    /// encoder stream after sending a request that references them, so the request is blocked until they arrive; the
    /// server then serves the file and acknowledges the section on its decoder stream.
    /// </summary>
    [Fact]
    public async Task Http3Server_RequestReferencingDynamicTable_BlockedThenServedAndAcknowledged()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Http3Server h3Server = new(server, new FileRoot(_www));
        Task serverTask = h3Server.RunAsync(cts.Token);

        IMultiplexedStream control = await client.OpenStreamAsync(false, cts.Token);
        await control.Stream.WriteAsync(new byte[] { 0x00, 0x04, 0x00 }, cts.Token); // control stream, empty SETTINGS
        IMultiplexedStream encoder = await client.OpenStreamAsync(false, cts.Token);
        await encoder.Stream.WriteAsync(new byte[] { 0x02 }, cts.Token);

        // Required Insert Count 2 (encoded 3), Base 2; :method GET (static 17), :scheme https (static 23),
        // :authority = relative 0 (absolute 1), :path = relative 1 (absolute 0).
        IMultiplexedStream request = await client.OpenStreamAsync(true, cts.Token);
        await request.Stream.WriteAsync(new byte[] { 0x01, 0x06, 0x03, 0x00, 0xd1, 0xd7, 0x80, 0x81 }, cts.Token);
        request.CompleteWrites();
        while (h3Server.Session.Qpack!.BlockedStreams == 0)
        {
            await Task.Delay(10, cts.Token); // the request waits for inserts that have not been sent
        }

        // Capacity 220, insert :path "/small.txt" and :authority "server" by static name reference.
        byte[] instructions = [0x3f, 0xbd, 0x01, 0xc1, 0x0a, .. "/small.txt"u8, 0xc0, 0x06, .. "server"u8];
        await encoder.Stream.WriteAsync(instructions, cts.Token);

        Http3FrameReader reader = new(request.Stream);
        Http3FrameHeader? headers = await reader.ReadFrameHeaderAsync(cts.Token);
        Assert.Equal(Http3FrameType.Headers, headers!.Value.Type);
        List<QuicManaged.Http.Qpack.HeaderField> fields = Http3Message.DecodeFieldSection(await reader.ReadWholePayloadAsync(4096, Http3ErrorCode.ExcessiveLoad, cts.Token), 4096);
        Assert.Equal("200", Http3Message.Find(fields, ":status"));
        MemoryStream body = new();
        while (await reader.ReadFrameHeaderAsync(cts.Token) is Http3FrameHeader frame)
        {
            Assert.Equal(Http3FrameType.Data, frame.Type);
            body.Write(await reader.ReadWholePayloadAsync(1 << 20, Http3ErrorCode.ExcessiveLoad, cts.Token));
        }

        Assert.Equal(_files["small.txt"], body.ToArray());
        Assert.Equal(2, h3Server.Session.Qpack.InsertCount);

        // The server's decoder stream (type 0x03) ends with a Section Acknowledgment for the request stream, possibly
        // after an Insert Count Increment.
        byte[] sectionAck = new byte[10];
        int ackLength = QuicManaged.Http.Qpack.PrefixedInteger.Encode((ulong)request.Id, 7, 0x80, sectionAck);
        List<byte> decoderBytes = new();
        await foreach (byte[] chunk in ReadServerDecoderStreamAsync(client, cts.Token))
        {
            decoderBytes.AddRange(chunk);
            if (decoderBytes.Count >= ackLength && decoderBytes.Skip(decoderBytes.Count - ackLength).SequenceEqual(sectionAck.Take(ackLength)))
            {
                break;
            }
        }

        await client.CloseAsync((long)Http3ErrorCode.NoError, cts.Token);
        await serverTask.WaitAsync(cts.Token);
        Assert.Null(h3Server.Session.Failure);
    }

    /// <summary>Accepts the server's unidirectional streams and yields what arrives on its QPACK decoder stream.</summary>
    private static async IAsyncEnumerable<byte[]> ReadServerDecoderStreamAsync(InMemoryConnection client, [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken)
    {
        while (await client.AcceptStreamAsync(cancellationToken) is IMultiplexedStream stream)
        {
            byte[] type = new byte[1];
            if (await stream.Stream.ReadAsync(type, cancellationToken) == 0 || type[0] != 0x03)
            {
                continue;
            }

            byte[] buffer = new byte[64];
            int n;
            while ((n = await stream.Stream.ReadAsync(buffer, cancellationToken)) > 0)
            {
                yield return buffer[..n];
            }

            yield break;
        }
    }

    [Fact]
    public async Task Http3_DownloaderReportsFailureForMissingFile()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Task serverTask = new Http3Server(server, new FileRoot(_www)).RunAsync(cts.Token);
        bool ok = await InteropDownloader.RunAsync(client, InteropTestCase.AlpnH3, Urls("small.txt", "nope.bin"), _downloads, TextWriter.Null, cts.Token);
        Assert.False(ok);
        await serverTask.WaitAsync(cts.Token);
    }

    [Fact]
    public async Task HqInterop_DownloadsEveryFileConcurrently_Sha256Matches()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Task serverTask = new HqServer(server, new FileRoot(_www)).RunAsync(cts.Token);

        bool ok = await InteropDownloader.RunAsync(client, InteropTestCase.AlpnHq, Urls(_files.Keys.ToArray()), _downloads, TextWriter.Null, cts.Token);

        Assert.True(ok);
        AssertDownloadsMatch();
        await client.CloseAsync(0, cts.Token);
        await serverTask.WaitAsync(cts.Token);
    }

    [Fact]
    public async Task HqInterop_MissingFileOrTraversal_ResetsStream()
    {
        using CancellationTokenSource cts = new(s_timeout);
        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Task serverTask = new HqServer(server, new FileRoot(_www)).RunAsync(cts.Token);
        foreach (string path in new[] { "/missing", "/../secret.txt" })
        {
            await Assert.ThrowsAnyAsync<IOException>(() => HqClient.GetAsync(client, path, new MemoryStream(), cts.Token));
        }

        MemoryStream body = new();
        Assert.Equal(1000, await HqClient.GetAsync(client, "/small.txt", body, cts.Token));
        Assert.Equal(_files["small.txt"], body.ToArray());
        await client.CloseAsync(0, cts.Token);
        await serverTask.WaitAsync(cts.Token);
    }

    [Theory]
    [InlineData(InteropTestCase.AlpnH3)]
    [InlineData(InteropTestCase.AlpnHq)]
    public async Task Multiplexing_ManyMoreFilesThanConcurrencyCap(string alpn)
    {
        using CancellationTokenSource cts = new(s_timeout);
        int count = InteropDownloader.MaxConcurrentRequests * 2 + 7;
        List<string> names = new();
        for (int i = 0; i < count; i++)
        {
            string name = $"m{i}.txt";
            File.WriteAllText(Path.Combine(_www, name), $"file {i} " + new string('x', i));
            names.Add(name);
        }

        (InMemoryConnection client, InMemoryConnection server) = InMemoryConnection.CreatePair();
        Task serverTask = alpn == InteropTestCase.AlpnH3
            ? new Http3Server(server, new FileRoot(_www)).RunAsync(cts.Token)
            : new HqServer(server, new FileRoot(_www)).RunAsync(cts.Token);

        Assert.True(await InteropDownloader.RunAsync(client, alpn, Urls(names.ToArray()), _downloads, TextWriter.Null, cts.Token));
        for (int i = 0; i < count; i++)
        {
            Assert.Equal($"file {i} " + new string('x', i), File.ReadAllText(Path.Combine(_downloads, names[i])));
        }

        await serverTask.WaitAsync(cts.Token);
    }
}
