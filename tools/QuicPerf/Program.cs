using QuicManaged.Tools.QuicPerf;

if (!PerfOptions.TryParse(args, out PerfOptions options, out string error))
{
    if (error.Length > 0) Console.Error.WriteLine($"error: {error}");
    Console.Error.WriteLine(PerfOptions.Usage);
    return error.Length > 0 ? 1 : 0;
}

return await new PerfRun(options).RunAsync();
