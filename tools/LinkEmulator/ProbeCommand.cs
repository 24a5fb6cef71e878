using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Net;
using System.Net.Quic.Managed;
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
    /// <summary>The <c>probe</c> command with its <c>server</c> and <c>client</c> commands.</summary>
    public static Command Create()
    {
        Option<string> serverProto = Proto();
        var listen = new Option<IPEndPoint>("--listen")
        {
            HelpName = "IP:PORT",
            Description = "Address and port to listen on.",
            Required = true,
            CustomParser = EndPoint,
        };
        var duration = new Option<double>("--duration-s")
        {
            HelpName = "N",
            Description = "Stop after N seconds; 0 serves until SIGINT/SIGTERM.",
            DefaultValueFactory = _ => 0,
            CustomParser = Seconds,
        };
        Option<string?> serverCc = CongestionControl();
        var statsOut = new Option<string?>("--stats-out")
        {
            HelpName = "PATH",
            Description = "QUIC: after each connection append a CSV line to PATH (" + QuicProbe.StatsCsvHeader
                + "), with a header line when it is created.",
        };
        var server = new Command("server", "Serve probes (a TCP+TLS or QUIC server answering each request with the size it names).")
        {
            serverProto, listen, duration, serverCc, statsOut,
        };
        server.SetAction(r => Serve(r.GetValue(serverProto)!, r.GetValue(listen)!, r.GetValue(duration), r.GetValue(serverCc), r.GetValue(statsOut)));

        Option<string> clientProto = Proto();
        var connect = new Option<IPEndPoint>("--connect")
        {
            HelpName = "IP:PORT",
            Description = "The probe server.",
            Required = true,
            CustomParser = EndPoint,
        };
        var sizes = new Option<string>("--sizes")
        {
            HelpName = "SIZE:REPS[,SIZE:REPS...]",
            Description = "Response sizes in bytes and repetitions of each (REPS defaults to 3).",
            DefaultValueFactory = _ => "1024:3",
        };
        sizes.Validators.Add(r =>
        {
            if (r.Tokens.Count > 0 && !TryParseSizes(r.Tokens[0].Value, out _))
            {
                r.AddError($"--sizes: expected SIZE:REPS[,SIZE:REPS...], not '{r.Tokens[0].Value}'");
            }
        });
        var timeout = new Option<double>("--timeout-s")
        {
            HelpName = "T",
            Description = "Timeout of one repetition in seconds; after a timeout the remaining repetitions of that size are skipped.",
            DefaultValueFactory = _ => 30,
            CustomParser = Seconds,
        };
        var delayLabel = new Option<string>("--delay-label")
        {
            HelpName = "D",
            Description = "Value of the delay_ms column.",
            DefaultValueFactory = _ => "?",
        };
        var lossLabel = new Option<string>("--loss-label")
        {
            HelpName = "L",
            Description = "Value of the loss_pct column.",
            DefaultValueFactory = _ => "?",
        };
        var output = new Option<string?>("--out")
        {
            HelpName = "PATH",
            Description = "Also append the CSV lines to PATH (with a header line when it is created).",
        };
        Option<string?> clientCc = CongestionControl();
        var client = new Command(
            "client",
            "Measure fresh connections against a probe server; prints CSV lines ("
            + ProbeTiming.CsvHeader + ").")
        {
            clientProto, connect, sizes, timeout, delayLabel, lossLabel, output, clientCc,
        };
        client.SetAction(r => RunClient(
            r.GetValue(clientProto)!, r.GetValue(connect)!, r.GetValue(sizes)!, r.GetValue(timeout), r.GetValue(delayLabel)!, r.GetValue(lossLabel)!, r.GetValue(output),
            r.GetValue(clientCc)));

        return new Command("probe", "The protocol study's probes: one server and one client per protocol, run on the two sides of the emulated link.")
        {
            server, client,
        };
    }

    private static Option<string> Proto()
    {
        var proto = new Option<string>("--proto")
        {
            HelpName = "tcp|quic",
            Description = "tcp: TLS 1.3 over TCP (SslStream); quic: this repository's managed QUIC.",
            DefaultValueFactory = _ => "tcp",
        };
        proto.AcceptOnlyFromAmong("tcp", "quic");
        return proto;
    }

    private static Option<string?> CongestionControl()
    {
        var cc = new Option<string?>("--cc")
        {
            HelpName = "cubic|newreno|bbr",
            Description = "QUIC: congestion controller of this side's connections (QuicConnectionOptions.CongestionControlAlgorithm; "
                + "the server's is the one that sends the responses). Default: the library's (CUBIC). On the client, "
                + "a given value also names the protocol column quic-managed-<cc>.",
        };
        cc.AcceptOnlyFromAmong("cubic", "newreno", "bbr");
        return cc;
    }

    internal static QuicCongestionControlAlgorithm ToAlgorithm(string? cc) => cc switch
    {
        "newreno" => QuicCongestionControlAlgorithm.NewReno,
        "bbr" => QuicCongestionControlAlgorithm.Bbr,
        _ => QuicCongestionControlAlgorithm.Cubic,
    };

    private static IPEndPoint EndPoint(ArgumentResult result)
    {
        string token = result.Tokens[0].Value;
        if (IPEndPoint.TryParse(token, out IPEndPoint? endPoint) && endPoint.Port != 0) return endPoint;
        result.AddError($"expected IP:PORT, not '{token}'");
        return new IPEndPoint(IPAddress.Any, 0);
    }

    private static double Seconds(ArgumentResult result)
    {
        string token = result.Tokens[0].Value;
        if (double.TryParse(token, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds)) return seconds;
        result.AddError($"expected a number of seconds, not '{token}'");
        return 0;
    }

    private static bool TryParseSizes(string text, out List<(long Size, int Reps)> sizes)
    {
        sizes = [];
        foreach (string item in text.Split(',', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = item.Split(':');
            int reps = 3;
            if (parts.Length > 2
                || !long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long size)
                || (parts.Length > 1 && !int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out reps)))
            {
                return false;
            }

            sizes.Add((size, reps));
        }

        return true;
    }

    private static int Serve(string proto, IPEndPoint listen, double durationSeconds, string? cc, string? statsOut)
    {
        using X509Certificate2 certificate = ProbeCertificate.Create();
        using var cts = durationSeconds > 0 ? new CancellationTokenSource(TimeSpan.FromSeconds(durationSeconds)) : new CancellationTokenSource();
        using PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; cts.Cancel(); });
        using PosixSignalRegistration interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; cts.Cancel(); });
        try
        {
            Task serve = proto == "tcp" ? TcpTlsProbe.ServeAsync(listen, certificate, cts.Token) : QuicProbe.ServeAsync(listen, certificate, ToAlgorithm(cc), statsOut, cts.Token);
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

    private static int RunClient(string proto, IPEndPoint server, string sizes, double timeoutSeconds, string delayLabel, string lossLabel, string? outPath,
        string? cc)
    {
        string protocolName = proto == "tcp" ? "tcp-tls" : cc is null ? "quic-managed" : "quic-managed-" + cc;
        QuicCongestionControlAlgorithm algorithm = ToAlgorithm(cc);
        try
        {
            // Untimed warm-up exchange.
            Measure(proto, server, 1024, timeoutSeconds, algorithm);
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

        TryParseSizes(sizes, out List<(long Size, int Reps)> parsedSizes);
        foreach ((long size, int reps) in parsedSizes)
        {
            for (int rep = 1; rep <= reps; rep++)
            {
                ProbeTiming timing;
                try
                {
                    timing = Measure(proto, server, size, timeoutSeconds, algorithm);
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

    private static ProbeTiming Measure(string proto, IPEndPoint server, long size, double timeoutSeconds, QuicCongestionControlAlgorithm algorithm)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(timeoutSeconds));
        Task<ProbeTiming> task = proto == "tcp" ? TcpTlsProbe.MeasureAsync(server, size, cts.Token) : QuicProbe.MeasureAsync(server, size, algorithm, cts.Token);
        // A transport that ignores cancellation must not hang the study: give up 5 s after the timeout.
        if (!((IAsyncResult)task).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(timeoutSeconds + 5)))
        {
            return new ProbeTiming { Status = "hung>" + timeoutSeconds.ToString(CultureInfo.InvariantCulture) + "s" };
        }

        return task.GetAwaiter().GetResult();
    }
}
