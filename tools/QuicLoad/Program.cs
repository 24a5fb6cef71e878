using QuicManaged.Tools.QuicLoad;

if (!LoadOptions.TryParse(args, out LoadOptions options, out string error))
{
    if (error.Length == 0)
    {
        // --help (of the root or of a mode) was printed by System.CommandLine's help action.
        Console.WriteLine(LoadOptions.HelpText([.. args.Where(a => LoadOptions.ModeNames.Contains(a)).Take(1)]));
        return 0;
    }

    Console.Error.WriteLine($"error: {error}");
    Console.Error.WriteLine(LoadOptions.Usage);
    return 2;
}

return options.Mode switch
{
    LoadMode.Serve => await LoadServe.RunAsync(options),
    LoadMode.SlowReader or LoadMode.Flood => await LoadAttack.RunAsync(options),
    LoadMode.AttackClient => await LoadAttack.RunClientAsync(options),
    _ => await new LoadRun(options).RunAsync(),
};
