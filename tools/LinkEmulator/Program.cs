using System.Runtime.InteropServices;

namespace QuicManaged.Tools.LinkEmulator;

internal static class Program
{
    private const int SIGUSR1 = 10;

    public static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "probe")
        {
            return ProbeCommand.Run(args.AsSpan(1).ToArray());
        }

        if (args.Length > 0 && (args[0] == "--help" || args[0] == "-h"))
        {
            Console.WriteLine(EmulatorOptions.Usage);
            return 0;
        }

        EmulatorOptions options;
        try
        {
            options = EmulatorOptions.Parse(args);
        }
        catch (Exception e) when (e is ArgumentException or FormatException or OverflowException)
        {
            Console.Error.WriteLine(e.Message);
            Console.Error.WriteLine(EmulatorOptions.Usage);
            return 2;
        }

        var loop = new EmulatorLoop(options);
        using PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; loop.RequestStop(); });
        using PosixSignalRegistration interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; loop.RequestStop(); });
        using PosixSignalRegistration usr1 = PosixSignalRegistration.Create((PosixSignal)SIGUSR1, c => { c.Cancel = true; loop.RequestDump(); });
        return loop.Run();
    }
}
