using BenchmarkDotNet.Running;

namespace System.Net.Quic.Managed.Benchmarks;

public static class Program
{
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
