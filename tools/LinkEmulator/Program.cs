using System.CommandLine;
using System.CommandLine.Parsing;
using System.Runtime.InteropServices;

namespace QuicManaged.Tools.LinkEmulator;

internal static class Program
{
    private const int SIGUSR1 = 10;

    public static int Main(string[] args)
    {
        Command command = EmulatorOptions.CreateCommand(Run);
        ParseResult result = command.Parse(args);
        if (result.Errors.Count > 0)
        {
            Console.Error.WriteLine($"error: {result.Errors[0].Message}");
            // The help of the (sub)command the error is in.
            var path = new List<string> { "--help" };
            for (CommandResult? c = result.CommandResult; c?.Parent is CommandResult parent; c = parent)
            {
                path.Insert(0, c.Command.Name);
            }

            command.Parse(path).Invoke(new InvocationConfiguration { Output = Console.Error });
            return 2;
        }

        // The emulator, a probe, or --help / --version.
        return result.Invoke();
    }

    private static int Run(EmulatorOptions options)
    {
        var loop = new EmulatorLoop(options);
        using PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; loop.RequestStop(); });
        using PosixSignalRegistration interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; loop.RequestStop(); });
        using PosixSignalRegistration usr1 = PosixSignalRegistration.Create((PosixSignal)SIGUSR1, c => { c.Cancel = true; loop.RequestDump(); });
        return loop.Run();
    }
}
