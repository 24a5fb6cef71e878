using QuicManaged.Tools.QuicPerf;

if (!PerfOptions.TryParse(args, out PerfOptions options, out string error))
{
    if (error.Length == 0)
    {
        Console.WriteLine(PerfOptions.Usage);
        return 0;
    }

    Console.Error.WriteLine($"error: {error}");
    Console.Error.WriteLine(PerfOptions.Usage);
    return 1;
}

return await new PerfRun(options).RunAsync();
