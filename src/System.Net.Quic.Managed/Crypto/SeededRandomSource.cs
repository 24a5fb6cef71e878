namespace System.Net.Quic.Managed.Crypto;

/// <summary>A deterministic randomness source for simulations and tests. Not for production use.</summary>
internal sealed class SeededRandomSource : IRandomSource
{
    private readonly Random _random;

    public SeededRandomSource(int seed) => _random = new Random(seed);

    public void Fill(Span<byte> destination) => _random.NextBytes(destination);
}
