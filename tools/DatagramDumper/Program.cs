namespace QuicManaged.Tools.DatagramDumper;

public static class Program
{
    public static int Main(string[] args)
    {
        Console.Error.WriteLine("DatagramDumper: not implemented yet.");
        return 2;
    }
}
