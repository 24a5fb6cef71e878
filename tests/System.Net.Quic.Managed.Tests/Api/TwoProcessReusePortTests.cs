using System.Buffers.Binary;
using System.Diagnostics;
using System.Net.Sockets;
using System.Security.Cryptography;
using QuicManaged.Tools.QuicLoad;
using Xunit.Abstractions;

namespace System.Net.Quic.Managed.Tests.Api;

/// <summary>
/// Two server processes on one UDP port: each is <c>QuicLoad serve</c> with one SO_REUSEPORT socket, the
/// group spanning both (<see cref="QuicListenerOptions.ReusePortGroupSize"/> 2, index 0 and 1, started in that order so
/// that the kernel's group indices match), and the same fleet keys. Each server opens a unidirectional stream on every
/// connection carrying its group index, so the client knows which process holds it, and echoes every bidirectional
/// stream. Loopback, Linux only; every process is killed on every path.
/// </summary>
[Collection(nameof(ScaleOutCollection))]
public class TwoProcessReusePortTests(ITestOutputHelper output)
{
    private const string SkipReason = "SO_REUSEPORT groups spanning processes are Linux only (one ordinary socket elsewhere)";

    /// <summary>
    /// 200 connections opened over both processes: the kernel spreads them by address, both serve some, each process's
    /// own count matches the client's tally, and every echo is byte-exact. Then a client whose port changes 8 times during
    /// a 2 MiB echo stays with its process (the steering program both processes attached sends its short headers by the
    /// worker tag of the server's connection IDs; a packet at the other process would be answered with a stateless reset).
    /// </summary>
    [SkippableFact]
    public async Task TwoProcessesOnOnePortShareConnectionsAndKeepARebindingClient()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), SkipReason);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        await using var pair = await ServerPair.StartAsync(output, requireRetry: false, timeout.Token);

        const int Count = 200;
        var perProcess = new int[2];
        await Task.WhenAll(Enumerable.Range(0, Count).Select(async i =>
        {
            await using QuicConnection client = await QuicConnection.ConnectAsync(ClientOptions(pair.EndPoint), QuicProvider.Managed, timeout.Token);
            int index = await ReadGroupIndexAsync(client, timeout.Token);
            Interlocked.Increment(ref perProcess[index]);
            await EchoAsync(client, 16 * 1024, seed: i, rebind: null, timeout.Token);
            await client.CloseAsync(0, timeout.Token);
        }));
        output.WriteLine($"{Count} connections: process 0 served {perProcess[0]}, process 1 served {perProcess[1]}");
        Assert.Equal(Count, perProcess[0] + perProcess[1]);
        Assert.True(perProcess[0] > 0 && perProcess[1] > 0, "the kernel should spread new clients over both processes");

        using var relay = new RebindingUdpRelay(pair.EndPoint);
        int owner;
        await using (QuicConnection client = await QuicConnection.ConnectAsync(ClientOptions(relay.EndPoint), QuicProvider.Managed, timeout.Token))
        {
            owner = await ReadGroupIndexAsync(client, timeout.Token);
            await EchoAsync(client, 2 << 20, seed: 17, rebind: relay, timeout.Token);
            Assert.Equal(8, relay.Rebinds);
            await client.CloseAsync(0, timeout.Token);
        }
        perProcess[owner]++;

        long[] served = await pair.StopAsync(timeout.Token);
        output.WriteLine($"rebinding client on process {owner}; the processes report {served[0]} and {served[1]} connections");
        Assert.Equal(perProcess[0], served[0]);
        Assert.Equal(perProcess[1], served[1]);
    }

    /// <summary>
    /// Both processes send every client a Retry and share the token key. A client's first Initial reaches process k (the
    /// kernel's hash of its address, learnt from an earlier connection from the same address), which answers with a Retry;
    /// before the client's second Initial, carrying k's token, leaves the relay, process k is killed, so the kernel delivers
    /// it to the other process, which accepts the token and completes the handshake.
    /// </summary>
    [SkippableFact]
    public async Task RetryTokenMintedByOneProcessIsAcceptedByTheOther()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), SkipReason);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var pair = await ServerPair.StartAsync(output, requireRetry: true, timeout.Token);
        using var relay = new HoldingUdpRelay(pair.EndPoint);

        int minter;
        await using (QuicConnection probe = await QuicConnection.ConnectAsync(ClientOptions(relay.EndPoint), QuicProvider.Managed, timeout.Token))
        {
            minter = await ReadGroupIndexAsync(probe, timeout.Token);
            Assert.True(probe.GetStatistics().Retried, "the servers should require a Retry");
            await probe.CloseAsync(0, timeout.Token);
        }

        relay.HoldAfterNextRetry();
        Task<QuicConnection> connect = QuicConnection.ConnectAsync(ClientOptions(relay.EndPoint), QuicProvider.Managed, timeout.Token).AsTask();
        await relay.RetryForwarded.WaitAsync(timeout.Token);
        await pair.KillAsync(minter, timeout.Token); // the group is the other process alone now
        relay.Release();

        await using QuicConnection client = await connect;
        Assert.True(client.GetStatistics().Retried);
        int holder = await ReadGroupIndexAsync(client, timeout.Token);
        output.WriteLine($"Retry from process {minter}, connection on process {holder}");
        Assert.Equal(1 - minter, holder);
        await EchoAsync(client, 64 * 1024, seed: 3, rebind: null, timeout.Token);
    }

    /// <summary>
    /// The process that holds a client's connection is killed (no CONNECTION_CLOSE); the client's next packet reaches the
    /// other process, which does not know the connection and answers with a stateless reset made with the shared key: the
    /// client's connection ends at once (well under 2 s) instead of after its 30 s idle timeout.
    /// </summary>
    [SkippableFact]
    public async Task StatelessResetFromTheProcessThatDoesNotOwnTheConnectionClosesItPromptly()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), SkipReason);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var pair = await ServerPair.StartAsync(output, requireRetry: false, timeout.Token);

        QuicClientConnectionOptions options = ClientOptions(pair.EndPoint);
        options.IdleTimeout = TimeSpan.FromSeconds(30);
        await using QuicConnection client = await QuicConnection.ConnectAsync(options, QuicProvider.Managed, timeout.Token);
        int owner = await ReadGroupIndexAsync(client, timeout.Token);
        await EchoAsync(client, 4 * 1024, seed: 5, rebind: null, timeout.Token);
        await pair.KillAsync(owner, timeout.Token);

        var watch = Stopwatch.StartNew();
        QuicException e = await Assert.ThrowsAsync<QuicException>(async () =>
        {
            await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, timeout.Token);
            await stream.WriteAsync(new byte[1200], completeWrites: true, timeout.Token);
            await QuicApiTestEnvironment.ReadToEndAsync(stream, timeout.Token);
        });
        watch.Stop();
        output.WriteLine($"owner {owner} killed; the client's connection ended after {watch.ElapsedMilliseconds} ms: {e.QuicError}: {e.Message}");
        Assert.Contains("stateless reset", e.Message, StringComparison.Ordinal);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(2), $"the reset took {watch.ElapsedMilliseconds} ms");
    }

    private static QuicClientConnectionOptions ClientOptions(IPEndPoint remote)
    {
        QuicClientConnectionOptions options = QuicApiTestEnvironment.ClientOptions(remote, LoadProtocol.Alpn.ToString(), trustTestRoot: false);
        options.ClientAuthenticationOptions.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        return options;
    }

    /// <summary>The group index of the process that holds the connection (its first unidirectional stream).</summary>
    private static async Task<int> ReadGroupIndexAsync(QuicConnection client, CancellationToken ct)
    {
        await using QuicStream stream = await client.AcceptInboundStreamAsync(ct);
        byte[] index = await QuicApiTestEnvironment.ReadToEndAsync(stream, ct);
        Assert.Equal(4, index.Length);
        int value = BinaryPrimitives.ReadInt32BigEndian(index);
        Assert.InRange(value, 0, 1);
        return value;
    }

    /// <summary>Sends <paramref name="bytes"/> random bytes in 64 KiB writes and checks the echo, rebinding 8 times on the way when asked.</summary>
    private static async Task EchoAsync(QuicConnection client, int bytes, int seed, RebindingUdpRelay? rebind, CancellationToken ct)
    {
        byte[] payload = new byte[bytes];
        new Random(seed).NextBytes(payload);
        await using QuicStream stream = await client.OpenOutboundStreamAsync(QuicStreamType.Bidirectional, ct);
        Task<byte[]> echo = QuicApiTestEnvironment.ReadToEndAsync(stream, ct);
        const int Chunk = 64 * 1024;
        for (int offset = 0, n = 0; offset < bytes; offset += Chunk, n++)
        {
            await stream.WriteAsync(payload.AsMemory(offset, Math.Min(Chunk, bytes - offset)), ct);
            if (rebind is not null && n % 3 == 1 && rebind.Rebinds < 8) rebind.Rebind();
        }
        stream.CompleteWrites();
        byte[] echoed = await echo;
        Assert.True(payload.AsSpan().SequenceEqual(echoed), $"the echo of {bytes} bytes arrived altered ({echoed.Length} bytes)");
    }

    /// <summary>Two <c>QuicLoad serve</c> processes in one SO_REUSEPORT group on a free loopback port, with shared fleet keys.</summary>
    private sealed class ServerPair : IAsyncDisposable
    {
        private readonly ServeProcess?[] _processes = new ServeProcess?[2];

        private ServerPair(IPEndPoint endPoint) => EndPoint = endPoint;

        public IPEndPoint EndPoint { get; }

        public static async Task<ServerPair> StartAsync(ITestOutputHelper output, bool requireRetry, CancellationToken ct)
        {
            string resetKey = Convert.ToHexString(RandomNumberGenerator.GetBytes(32));
            string tokenKey = Convert.ToHexString(RandomNumberGenerator.GetBytes(32));
            for (int attempt = 0; ; attempt++)
            {
                var pair = new ServerPair(new IPEndPoint(IPAddress.Loopback, FreeUdpPort()));
                try
                {
                    // Group indices are bind order: process 1 starts once process 0 listens.
                    for (int i = 0; i < 2; i++)
                    {
                        string arguments = $"serve --provider managed --port {pair.EndPoint.Port} --reuseport-group-size 2 --reuseport-group-index {i} "
                            + $"--stateless-reset-key {resetKey} --token-key {tokenKey}{(requireRetry ? " --require-retry" : "")} --max-seconds 300";
                        pair._processes[i] = ServeProcess.Start(arguments, $"process {i}", output);
                        await pair._processes[i]!.WaitForLineAsync("listening ", ct);
                    }
                    return pair;
                }
                catch (Exception e) when (attempt < 2 && e is not OperationCanceledException)
                {
                    output.WriteLine($"port {pair.EndPoint.Port}: {e.Message}; another port");
                    await pair.DisposeAsync();
                }
                catch
                {
                    await pair.DisposeAsync();
                    throw;
                }
            }
        }

        /// <summary>Kills process <paramref name="index"/> at once (no CONNECTION_CLOSE, its socket leaves the group).</summary>
        public async Task KillAsync(int index, CancellationToken ct)
        {
            ServeProcess process = _processes[index]!;
            _processes[index] = null;
            await process.DisposeAsync().AsTask().WaitAsync(ct);
        }

        /// <summary>Ends both processes' standard input; returns the connections each reports it served.</summary>
        public async Task<long[]> StopAsync(CancellationToken ct)
        {
            var served = new long[2];
            for (int i = 0; i < 2; i++) _processes[i]!.EndInput();
            for (int i = 0; i < 2; i++)
            {
                string line = await _processes[i]!.WaitForLineAsync("served ", ct);
                served[i] = long.Parse(line.Split(' ')[1], Globalization.CultureInfo.InvariantCulture);
                Assert.Contains("server failures 0", line, StringComparison.Ordinal);
            }
            return served;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (ServeProcess? process in _processes)
            {
                if (process is not null) await process.DisposeAsync();
            }
        }

        private static int FreeUdpPort()
        {
            using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            return ((IPEndPoint)probe.LocalEndPoint!).Port;
        }
    }

    /// <summary>One <c>QuicLoad serve</c> process; its output lines go to the test output and can be waited for. Disposing kills it.</summary>
    private sealed class ServeProcess : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly List<string> _lines = [];
        private readonly SemaphoreSlim _newLine = new(0);
        private readonly ITestOutputHelper _output;
        private readonly string _name;

        private ServeProcess(Process process, string name, ITestOutputHelper output)
        {
            _process = process;
            _name = name;
            _output = output;
        }

        public static ServeProcess Start(string arguments, string name, ITestOutputHelper output)
        {
            string dll = typeof(LoadServer).Assembly.Location;
            string runtimeConfig = Path.ChangeExtension(dll, ".runtimeconfig.json");
            if (!File.Exists(runtimeConfig)) runtimeConfig = Path.ChangeExtension(typeof(TwoProcessReusePortTests).Assembly.Location, ".runtimeconfig.json");
            var info = new ProcessStartInfo("dotnet")
            {
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (string argument in new[] { "exec", "--runtimeconfig", runtimeConfig, dll }.Concat(arguments.Split(' '))) info.ArgumentList.Add(argument);
            info.Environment.Remove("DOTNET_SYSTEM_NET_QUIC_PROVIDER");
            var process = new Process { StartInfo = info };
            var serve = new ServeProcess(process, name, output);
            process.OutputDataReceived += (_, e) => serve.OnLine(e.Data, stderr: false);
            process.ErrorDataReceived += (_, e) => serve.OnLine(e.Data, stderr: true);
            process.Start();
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            return serve;
        }

        private void OnLine(string? line, bool stderr)
        {
            if (line is null) return;
            lock (_lines) _lines.Add(stderr ? "stderr: " + line : line);
            _newLine.Release();
            try
            {
                _output.WriteLine($"{_name}: {(stderr ? "stderr: " : "")}{line}");
            }
            catch (InvalidOperationException)
            {
                // The test has ended.
            }
        }

        /// <summary>The first output line that starts with <paramref name="prefix"/>; fails when the process exits without one.</summary>
        public async Task<string> WaitForLineAsync(string prefix, CancellationToken ct)
        {
            while (true)
            {
                lock (_lines)
                {
                    foreach (string line in _lines)
                    {
                        if (line.StartsWith(prefix, StringComparison.Ordinal)) return line;
                    }
                }
                if (_process.HasExited && !await _newLine.WaitAsync(500, ct))
                {
                    throw new InvalidOperationException($"{_name} exited with code {_process.ExitCode} before printing '{prefix}...'");
                }
                await _newLine.WaitAsync(250, ct);
            }
        }

        public void EndInput() => _process.StandardInput.Close();

        public async ValueTask DisposeAsync()
        {
            try
            {
                if (!_process.HasExited) _process.Kill(entireProcessTree: true);
                using var exit = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await _process.WaitForExitAsync(exit.Token);
            }
            catch (Exception e) when (e is InvalidOperationException or OperationCanceledException or ComponentModel.Win32Exception)
            {
                // Gone already, or not reaped in time (it was killed either way).
            }
            finally
            {
                _process.Dispose();
                _newLine.Dispose();
            }
        }
    }

    /// <summary>
    /// A UDP relay with one upstream socket (one client address as the servers see it) that can hold the client's datagrams
    /// after forwarding the servers' next Retry, until <see cref="Release"/>: the moment between a client's Retry and its
    /// second Initial.
    /// </summary>
    private sealed class HoldingUdpRelay : IDisposable
    {
        private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly Socket _upstream = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly IPEndPoint _server;
        private readonly CancellationTokenSource _stop = new();
        private readonly Queue<byte[]> _held = new();
        private readonly TaskCompletionSource _retryForwarded = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private volatile EndPoint? _client;
        private volatile bool _armed;
        private bool _holding;

        public HoldingUdpRelay(IPEndPoint server)
        {
            _server = server;
            _front.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _upstream.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _ = Task.Run(PumpToServer);
            _ = Task.Run(PumpToClient);
        }

        public IPEndPoint EndPoint => (IPEndPoint)_front.LocalEndPoint!;

        /// <summary>Completes when a Retry went to the client with the client's datagrams being held from then on.</summary>
        public Task RetryForwarded => _retryForwarded.Task;

        public void HoldAfterNextRetry() => _armed = true;

        /// <summary>Sends the held datagrams, in order, and forwards again.</summary>
        public void Release()
        {
            lock (_held)
            {
                while (_held.TryDequeue(out byte[]? datagram)) _upstream.SendTo(datagram, _server);
                _holding = false;
            }
        }

        private async Task PumpToServer()
        {
            byte[] buffer = new byte[65536];
            EndPoint any = new IPEndPoint(IPAddress.Any, 0);
            try
            {
                while (!_stop.IsCancellationRequested)
                {
                    SocketReceiveFromResult r = await _front.ReceiveFromAsync(buffer, SocketFlags.None, any, _stop.Token);
                    _client = r.RemoteEndPoint;
                    lock (_held)
                    {
                        if (_holding)
                        {
                            _held.Enqueue(buffer.AsSpan(0, r.ReceivedBytes).ToArray());
                            continue;
                        }
                    }
                    await _upstream.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), SocketFlags.None, _server, _stop.Token);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
            }
        }

        private async Task PumpToClient()
        {
            byte[] buffer = new byte[65536];
            EndPoint any = new IPEndPoint(IPAddress.Any, 0);
            try
            {
                while (!_stop.IsCancellationRequested)
                {
                    SocketReceiveFromResult r = await _upstream.ReceiveFromAsync(buffer, SocketFlags.None, any, _stop.Token);
                    // A QUIC v1 Retry: long header of type 3 (RFC 9000 §17.2.5), version 1.
                    bool retry = r.ReceivedBytes > 5 && (buffer[0] & 0xF0) == 0xF0 && BinaryPrimitives.ReadUInt32BigEndian(buffer.AsSpan(1)) == 1;
                    if (retry && _armed)
                    {
                        lock (_held) _holding = true;
                        _armed = false;
                        if (_client is { } c) await _front.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), SocketFlags.None, c, _stop.Token);
                        _retryForwarded.TrySetResult();
                        continue;
                    }
                    if (_client is { } client) await _front.SendToAsync(buffer.AsMemory(0, r.ReceivedBytes), SocketFlags.None, client, _stop.Token);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
            }
        }

        public void Dispose()
        {
            _stop.Cancel();
            _front.Dispose();
            _upstream.Dispose();
            _stop.Dispose();
        }
    }
}
