using QuicManaged.Interop.Runner;

namespace QuicManaged.Interop;

/// <summary>
/// quic-interop-runner endpoint, run outside Docker. Environment: ROLE, TESTCASE, REQUESTS, WWW, DOWNLOADS, CERTS,
/// SSLKEYLOGFILE, QLOGDIR, HOST (default "::"), PORT (default 443), INTEROP_TIMEOUT_SECONDS (client, default 60).
/// Exit codes: 0 all requests done and files written, 1 failure, 2 bad configuration, 127 unsupported test case.
/// </summary>
public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        InteropConfiguration? config = InteropConfiguration.TryRead(Environment.GetEnvironmentVariable, out string? error);
        if (config is null)
        {
            Console.Error.WriteLine($"InteropEndpoint: {error}");
            return InteropExitCode.BadConfiguration;
        }

        using CancellationTokenSource stop = new();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            stop.Cancel();
        };
        using System.Runtime.InteropServices.PosixSignalRegistration sigterm = System.Runtime.InteropServices.PosixSignalRegistration.Create(
            System.Runtime.InteropServices.PosixSignal.SIGTERM,
            context =>
            {
                context.Cancel = true;
                stop.Cancel();
            });
        return await InteropEndpointRunner.RunAsync(config, Console.Error, stop.Token).ConfigureAwait(false);
    }
}
