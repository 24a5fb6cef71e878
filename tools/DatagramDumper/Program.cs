namespace QuicManaged.Tools.DatagramDumper;

public static class Program
{
    public static int Main(string[] args) => DumperCommand.Run(args, Console.Out, Console.Error);
}
