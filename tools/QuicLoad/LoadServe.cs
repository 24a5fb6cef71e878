using System.Globalization;
using System.Security.Cryptography.X509Certificates;
using QuicManaged.Tools.QuicPerf.Transport;

namespace QuicManaged.Tools.QuicLoad;

/// <summary>
/// The serve mode: a server process of its own, for tests with several server processes on one port (SO_REUSEPORT). It
/// prints <c>listening &lt;address&gt; ...</c> once it listens, serves until its standard input ends (or the time limit),
/// then prints <c>served &lt;C&gt; connections &lt;S&gt; streams &lt;B&gt; bytes ...</c> and exits.
/// </summary>
public static class LoadServe
{
    public static async Task<int> RunAsync(LoadOptions options)
    {
        using X509Certificate2 certificate = SelfSignedCertificate.Create(rsa: options.RsaCertificate);
        var counters = new LoadCounters();
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(options.TimeLimitSeconds));
        LoadServer server;
        try
        {
            server = await LoadServer.StartAsync(options, certificate, counters, limit.Token).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"error: cannot listen: {e.GetType().Name}: {e.Message}");
            return 1;
        }

        await using (server.ConfigureAwait(false))
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"listening {server.EndPoint} group index {options.ReusePortGroupIndex} of {options.ReusePortGroupSize}, sockets {Math.Max(1, options.ListenerSockets)}, retry {options.RequireRetry}"));
            Task stdinEnded = Task.Run(() =>
            {
                while (Console.In.ReadLine() is not null)
                {
                }
            });
            await Task.WhenAny(stdinEnded, Task.Delay(Timeout.Infinite, limit.Token)).ConfigureAwait(false);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"served {server.ServedConnections} connections {server.ServedStreams} streams {server.EchoedBytes} bytes; server failures {counters.ServerFailures}"));
            foreach (string message in counters.FailureMessages) Console.WriteLine($"  e.g. {message}");
        }

        return limit.IsCancellationRequested ? 1 : 0;
    }
}
