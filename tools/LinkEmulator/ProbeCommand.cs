using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace QuicManaged.Tools.LinkEmulator;

/// <summary>
/// <c>LinkEmulator probe server|client</c>: the client side of the protocol study. Each repetition is a fresh connection;
/// one untimed small exchange first warms up the JIT and the TLS stack so that the first timed handshake is not a cold start.
/// </summary>
internal static class ProbeCommand
{
    private const string Usage =
        "LinkEmulator probe server --proto tcp|quic --listen IP:PORT [--duration-s N]\n" +
        "LinkEmulator probe client --proto tcp|quic --connect IP:PORT --sizes SIZE:REPS[,SIZE:REPS...] [--timeout-s T]\n" +
        "                          [--delay-label D] [--loss-label L] [--out results.csv]\n" +
        "Client output: CSV lines (" + "protocol,delay_ms,loss_pct,size,rep,handshake_ms,ttfb_ms,transfer_ms,close_ms,bytes,status).\n" +
        "After a timeout the remaining repetitions of that size are skipped.";

    public static int Run(string[] args)
    {
        if (args.Length == 0 || args[0] is "--help" or "-h")
        {
            Console.WriteLine(Usage);
            return args.Length == 0 ? 2 : 0;
        }

        string mode = args[0];
        string proto = "tcp";
        string? listen = null, connect = null, outPath = null;
        string sizes = "1024:3";
        string delayLabel = "?", lossLabel = "?";
        double timeoutSeconds = 30, durationSeconds = 0;
        for (int i = 1; i < args.Length; i++)
        {
            string name = args[i];
            if (i + 1 >= args.Length)
            {
                Console.Error.WriteLine($"{name} needs a value\n{Usage}");
                return 2;
            }

            string value = args[++i];
            switch (name)
            {
                case "--proto": proto = value; break;
                case "--listen": listen = value; break;
                case "--connect": connect = value; break;
                case "--sizes": sizes = value; break;
                case "--timeout-s": timeoutSeconds = double.Parse(value, CultureInfo.InvariantCulture); break;
                case "--duration-s": durationSeconds = double.Parse(value, CultureInfo.InvariantCulture); break;
                case "--delay-label": delayLabel = value; break;
                case "--loss-label": lossLabel = value; break;
                case "--out": outPath = value; break;
                default:
                    Console.Error.WriteLine($"unknown option {name}\n{Usage}");
                    return 2;
            }
        }

        if (proto is not ("tcp" or "quic"))
        {
            Console.Error.WriteLine("--proto must be tcp or quic");
            return 2;
        }

        if (mode == "server" && listen is not null)
        {
            return Serve(proto, IPEndPoint.Parse(listen), durationSeconds);
        }

        if (mode == "client" && connect is not null)
        {
            return RunClient(proto, IPEndPoint.Parse(connect), sizes, timeoutSeconds, delayLabel, lossLabel, outPath);
        }

        Console.Error.WriteLine(Usage);
        return 2;
    }

    private static int Serve(string proto, IPEndPoint listen, double durationSeconds)
    {
        using X509Certificate2 certificate = ProbeCertificate.Create();
        using var cts = durationSeconds > 0 ? new CancellationTokenSource(TimeSpan.FromSeconds(durationSeconds)) : new CancellationTokenSource();
        using PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; cts.Cancel(); });
        using PosixSignalRegistration interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; cts.Cancel(); });
        try
        {
            Task serve = proto == "tcp" ? TcpTlsProbe.ServeAsync(listen, certificate, cts.Token) : QuicProbe.ServeAsync(listen, certificate, cts.Token);
            serve.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException)
        {
        }
        catch (PlatformNotSupportedException e)
        {
            Console.Error.WriteLine($"not run: {e.Message}");
            return 3;
        }

        return 0;
    }

    private static int RunClient(string proto, IPEndPoint server, string sizes, double timeoutSeconds, string delayLabel, string lossLabel, string? outPath)
    {
        string protocolName = proto == "tcp" ? "tcp-tls" : "quic-managed";
        try
        {
            // Untimed warm-up exchange.
            Measure(proto, server, 1024, timeoutSeconds);
        }
        catch (PlatformNotSupportedException e)
        {
            Console.Error.WriteLine($"not run: {e.Message}");
            return 3;
        }
        catch (Exception e) when (e is IOException or SocketException or AuthenticationException or OperationCanceledException)
        {
            Console.Error.WriteLine($"warm-up failed: {e.GetType().Name}: {e.Message}");
        }

        foreach (string item in sizes.Split(',', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = item.Split(':');
            long size = long.Parse(parts[0], CultureInfo.InvariantCulture);
            int reps = parts.Length > 1 ? int.Parse(parts[1], CultureInfo.InvariantCulture) : 3;
            for (int rep = 1; rep <= reps; rep++)
            {
                ProbeTiming timing;
                try
                {
                    timing = Measure(proto, server, size, timeoutSeconds);
                }
                catch (OperationCanceledException)
                {
                    timing = new ProbeTiming { Status = "timeout>" + timeoutSeconds.ToString(CultureInfo.InvariantCulture) + "s" };
                }
                catch (Exception e) when (e is IOException or SocketException or AuthenticationException or PlatformNotSupportedException)
                {
                    timing = new ProbeTiming { Status = "error:" + e.GetType().Name };
                }

                string line = timing.ToCsv(protocolName, delayLabel, lossLabel, size, rep);
                Console.WriteLine(line);
                if (outPath is not null)
                {
                    bool exists = File.Exists(outPath);
                    File.AppendAllText(outPath, (exists ? string.Empty : ProbeTiming.CsvHeader + "\n") + line + "\n");
                }

                if (timing.Status != "ok")
                {
                    break;
                }
            }
        }

        return 0;
    }

    private static ProbeTiming Measure(string proto, IPEndPoint server, long size, double timeoutSeconds)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(timeoutSeconds));
        Task<ProbeTiming> task = proto == "tcp" ? TcpTlsProbe.MeasureAsync(server, size, cts.Token) : QuicProbe.MeasureAsync(server, size, cts.Token);
        // A transport that ignores cancellation must not hang the study: give up 5 s after the timeout.
        if (!((IAsyncResult)task).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(timeoutSeconds + 5)))
        {
            return new ProbeTiming { Status = "hung>" + timeoutSeconds.ToString(CultureInfo.InvariantCulture) + "s" };
        }

        return task.GetAwaiter().GetResult();
    }
}
