namespace QuicManaged.Interop;

public static class Program
{
    public static int Main(string[] args)
    {
        Console.Error.WriteLine("InteropEndpoint: not implemented yet.");
        return 127;
    }
}
