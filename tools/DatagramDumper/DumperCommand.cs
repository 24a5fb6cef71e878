namespace QuicManaged.Tools.DatagramDumper;

/// <summary>The CLI: parses arguments, opens the input and key log, and formats every datagram.</summary>
internal static class DumperCommand
{
    public const int Success = 0;
    public const int InputError = 1;
    public const int UsageError = 2;

    public static int Run(string[] args, TextWriter output, TextWriter error)
    {
        if (!DumperArguments.TryParse(args, out DumperArguments parsed, out string? problem))
        {
            error.WriteLine($"error: {problem}");
            error.WriteLine(DumperArguments.Usage);
            return UsageError;
        }

        if (parsed.Help)
        {
            output.WriteLine(DumperArguments.Usage);
            return Success;
        }

        KeyLog? keyLog = null;
        if (parsed.KeyLogPath != null)
        {
            if (!TryReadText(parsed.KeyLogPath, error, out string keyLogText)) return InputError;
            keyLog = KeyLog.Parse(keyLogText);
        }

        byte[]? originalDcid = parsed.OriginalDcid;
        IDatagramSource source;
        if (parsed.Hex != null)
        {
            HexText.TryParse(parsed.Hex, out byte[] datagram);
            source = new BinaryDatagramSource(datagram);
        }
        else if (parsed.Sample != null)
        {
            SampleDatagrams.TryGet(parsed.Sample, out string hex, out string sampleOdcid);
            HexText.TryParse(hex, out byte[] datagram);
            originalDcid ??= Convert.FromHexString(sampleOdcid);
            source = new BinaryDatagramSource(datagram);
        }
        else if (parsed.PcapPath != null)
        {
            if (!TryReadBytes(parsed.PcapPath, error, out byte[] capture)) return InputError;
            if (!PcapDatagramSource.LooksLikeCapture(capture))
            {
                error.WriteLine($"error: {parsed.PcapPath}: not a pcap or pcapng file");
                return InputError;
            }

            source = new PcapDatagramSource(capture, parsed.Port);
        }
        else if (parsed.NetTracePath != null)
        {
            if (!File.Exists(parsed.NetTracePath))
            {
                error.WriteLine($"error: cannot read {parsed.NetTracePath}: no such file");
                return InputError;
            }

            if (parsed.Counters) return CounterMonitor.RunFile(parsed.NetTracePath, output, error);
            source = EventPipeDatagramSource.FromFile(parsed.NetTracePath);
        }
        else if (parsed.ProcessId is int counterPid && parsed.Counters)
        {
            return CounterMonitor.Run(counterPid, TimeSpan.FromSeconds(parsed.Seconds), TimeSpan.FromSeconds(1), output, error);
        }
        else if (parsed.ProcessId is int pid)
        {
            try
            {
                source = EventPipeDatagramSource.FromProcess(pid, TimeSpan.FromSeconds(parsed.Seconds));
            }
            catch (Exception e) when (e is Microsoft.Diagnostics.NETCore.Client.ServerNotAvailableException or UnauthorizedAccessException or IOException or TimeoutException)
            {
                error.WriteLine($"error: cannot attach to PID {pid}: {e.Message}");
                return InputError;
            }
        }
        else if (parsed.Binary)
        {
            if (!TryReadBytes(parsed.FilePath!, error, out byte[] datagram)) return InputError;
            source = new BinaryDatagramSource(datagram);
        }
        else
        {
            if (!TryReadText(parsed.FilePath!, error, out string text)) return InputError;
            source = new HexDatagramSource(text);
        }

        var options = new DumpOptions
        {
            CidLength = parsed.CidLength,
            OriginalDcid = originalDcid,
            CidFilter = parsed.CidFilter,
            FrameFilter = parsed.FrameFilter,
        };
        using var formatter = new DatagramFormatter(output, options, keyLog);
        foreach (CapturedDatagram datagram in source.Read())
        {
            formatter.Format(datagram);
        }

        output.Flush();
        return Success;
    }

    private static bool TryReadBytes(string path, TextWriter error, out byte[] bytes)
    {
        try
        {
            bytes = File.ReadAllBytes(path);
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            error.WriteLine($"error: cannot read {path}: {e.Message}");
            bytes = [];
            return false;
        }
    }

    private static bool TryReadText(string path, TextWriter error, out string text)
    {
        if (TryReadBytes(path, error, out byte[] bytes))
        {
            text = System.Text.Encoding.UTF8.GetString(bytes);
            return true;
        }

        text = "";
        return false;
    }
}
